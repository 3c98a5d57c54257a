import sqlite3


def open(path) -> "Store":
    return Store(sqlite3.connect(path))


class Store:
    def __init__(self, connection):
        self.connection = connection

    def get(self, key):
        return self._row(key)

    def _row(self, key):
        return key
