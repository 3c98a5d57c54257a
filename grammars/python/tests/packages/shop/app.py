from shop.store import db
from shop.billing.accounts import open as open_account


class App:
    def __init__(self):
        self.store = db.open("shop.db")

    def handle(self, key):
        return self.store.get(key)

    def charge(self, account):
        return open_account(account)


def main():
    app = App()
    app.handle("apple")
    app.missing()
