from django.db import models


class Book(models.Model):
    def publish(self):
        return self.save()


class Shelf:
    def filter(self, **kwargs):
        return kwargs


def stock():
    Book.objects.create(title="Dune")
    Book._default_manager.filter(title="Dune")


def sort(book):
    Shelf.objects.filter(title="Dune")
    Book.objects.reprint()
