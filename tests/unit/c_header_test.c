/* The C API is C: this file must compile as C11 with -Wall -Wextra -pedantic and link against
 * libkcache. It checks the *_init contract and strerror from plain C. */
#include <kcache/kcache.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  kcache_request req;
  kcache_request_init(&req);
  if (req.size != sizeof req || req.device != -1) return 1;
  kcache_module mod;
  kcache_module_init(&mod);
  if (mod.fd != -1 || mod.path != NULL) return 2;
  kcache_error err;
  kcache_error_init(&err);
  kcache_client* client = NULL;
  if (kcache_client_new(NULL, &client) != KCACHE_OK || client == NULL) return 3;
  /* Outputs are untouched on failure: a request without a name is EINVAL. */
  if (kcache_get(client, &req, &mod, &err) != KCACHE_EINVAL || mod.path != NULL) return 4;
  if (err.code != KCACHE_EINVAL || err.message == NULL) return 5;
  kcache_error_clear(&err);
  kcache_client_free(client);
  if (strlen(kcache_strerror(KCACHE_ENOTFOUND)) == 0) return 6;
  printf("libkcache %s: C API ok\n", kcache_version());
  return 0;
}
