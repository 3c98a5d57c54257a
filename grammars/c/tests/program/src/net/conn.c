#include "store.h"

int conn_send(conn_t *conn, int key) {
  return conn->send(store_get(key));
}
