from django.db.models.base import Model
from django.db.models.query import QuerySet

__all__ = ["Model", "QuerySet"]
