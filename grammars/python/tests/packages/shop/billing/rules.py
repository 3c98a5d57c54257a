def normalise(account):
    return account.lower()
