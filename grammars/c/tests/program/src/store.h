#ifndef STORE_H
#define STORE_H

struct store {
  int fd;
};

typedef struct {
  int (*send)(int key);
} conn_t;

int store_get(int key);

static inline int store_key(int k) { return k * 2; }

#endif
