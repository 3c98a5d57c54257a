class QuerySet:
    def filter(self, **kwargs):
        return self

    def create(self, **kwargs):
        return kwargs
