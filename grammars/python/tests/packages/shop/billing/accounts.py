from .rules import normalise


def open(account):
    return normalise(account)
