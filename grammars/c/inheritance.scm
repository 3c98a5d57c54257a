; Inheritance. C has none; the query file is here so every language has the same six.
