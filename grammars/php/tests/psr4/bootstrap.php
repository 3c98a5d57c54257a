<?php

ini_set('display_errors', '1');
