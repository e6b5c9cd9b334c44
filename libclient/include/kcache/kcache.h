/* kcache/kcache.h — the C API of libkcache, the client of the kcache daemon (kcached).
 *
 * Contract (a stable C ABI):
 *  - Every function returns KCACHE_OK (0) or a negative KCACHE_E* code; outputs are written
 *    only on success, and error details only on failure (when an error struct is given).
 *  - Public structs start with a `size` field: set it with the matching *_init() function so
 *    newer libraries can grow them without breaking older callers.
 *  - A kcache_client is thread-safe: any number of threads may call kcache_get() on one
 *    handle at once. It reconnects by itself after a daemon restart.
 *  - Nothing here throws, and no C++ type crosses this header.
 *  - Strings returned to the caller are owned by the struct that holds them and freed by its
 *    *_clear() function (or kcache_free() for bare strings).
 */
#ifndef KCACHE_KCACHE_H
#define KCACHE_KCACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(KCACHE_BUILDING_LIBRARY)
#define KCACHE_API __attribute__((visibility("default")))
#else
#define KCACHE_API
#endif

/* Error codes: the negated wire status codes (schema/wire_v1.def). */
enum {
  KCACHE_OK = 0,
  KCACHE_ENOTFOUND = -1,      /* no entry, no provider, no source to compile */
  KCACHE_ECOMPILE = -2,       /* the compiler rejected the source; see kcache_error.log */
  KCACHE_EINVAL = -3,         /* bad argument (target, option, name, struct size) */
  KCACHE_EUNAVAILABLE = -4,   /* no compile now: compiler missing, compile cancelled, worker killed */
  KCACHE_ETIMEDOUT = -5,      /* connect, request or compile-wait timeout */
  KCACHE_ETOOLARGE = -6,      /* a size or count limit was exceeded */
  KCACHE_EPERM = -7,          /* the operation needs an admin caller */
  KCACHE_EPROTO = -8,         /* protocol violation */
  KCACHE_EVERSION = -9,       /* no common protocol version */
  KCACHE_EOPCODE = -10,       /* the daemon does not know the operation */
  KCACHE_EIO = -11,           /* an I/O error */
  KCACHE_EINTERNAL = -12,     /* a bug */
  KCACHE_EBUSY = -13,         /* a per-client quota is exhausted; retry */
  KCACHE_EDISCONNECTED = -16, /* the daemon cannot be reached */
  KCACHE_ECOMPILER = -17,     /* the compiler crashed (or hit compile.memory_limit) */
  KCACHE_ECORRUPT = -18       /* data failed an integrity check */
};

typedef struct kcache_client kcache_client;

typedef struct kcache_client_options {
  uint32_t size;               /* sizeof(kcache_client_options), set by _init */
  const char* socket_path;     /* NULL: $KCACHE_SOCKET, the system socket, the user socket */
  uint32_t connect_timeout_ms; /* how long to keep trying to reach the daemon (default 2000) */
  uint32_t request_timeout_ms; /* per request, until an answer or in_progress (default 10000) */
  uint32_t compile_timeout_ms; /* waiting on a compile once in progress (default 300000) */
  uint32_t flags;              /* KCACHE_CLIENT_FALLBACK, or 0 */
} kcache_client_options;

/* When kcached cannot be reached or a timeout above expires, compile requests that carry a
 * source and an explicit target in this process instead: same compiler search, key and rules
 * as the daemon; the module lands in a private directory of this process (removed by
 * kcache_client_free), never in the daemon's cache, with origin KCACHE_ORIGIN_FALLBACK. The
 * daemon is told how many such compiles happened once it is reachable again. Off by default
 * in the C API, on by default in the C++ API (kcache::ClientOptions::fallback). */
#define KCACHE_CLIENT_FALLBACK 0x1u

typedef struct kcache_header {
  const char* name; /* the name the source #includes */
  const char* data;
  size_t data_size;
} kcache_header;

#define KCACHE_GET_FD 0x1u /* also return an open read-only fd of the module */

typedef struct kcache_request {
  uint32_t size;           /* sizeof(kcache_request), set by _init */
  const char* name;        /* required: module name (opaque, never a path) */
  const char* version;     /* consumer's full version, e.g. "0.6.18+cu130", or NULL */
  const char* target;      /* explicit target ("sm_90a", "gfx942"), or NULL to use device */
  int32_t device;          /* local device index when target is NULL; -1 for none */
  const char* source;      /* module source, or NULL (lookup only) */
  size_t source_size;
  const kcache_header* headers;
  size_t header_count;
  const char* const* options; /* compiler options, in order */
  size_t option_count;
  uint32_t flags;          /* KCACHE_GET_FD */
  const char* system_json; /* worker's variant facts (JSON) or NULL */
} kcache_request;

typedef enum kcache_origin {
  KCACHE_ORIGIN_PROVIDER = 0, /* served from a provider artifact */
  KCACHE_ORIGIN_HIT = 1,      /* already in the cache */
  KCACHE_ORIGIN_COMPILED = 2, /* compiled for this request (or a concurrent identical one) */
  KCACHE_ORIGIN_FALLBACK = 3  /* compiled in this process: kcached was unreachable or slow */
} kcache_origin;

typedef struct kcache_module {
  uint32_t size;        /* sizeof(kcache_module), set by _init */
  char* path;           /* absolute path of the immutable module file */
  uint64_t module_size; /* bytes */
  char digest[33];      /* XXH3-128 of the bytes, 32 hex digits (as xxhsum -H2) */
  char key[33];         /* the cache key, 32 hex digits */
  /* 1 when path is a directory (a kernels build variant, served as an immutable tree; fd, if
   * asked, is then a directory fd), 0 for a file. It sits in what was padding before target,
   * so the struct's size and every other offset are those of the first release. */
  unsigned char is_directory;
  char* target;         /* the resolved target, e.g. "sm_90a" */
  kcache_origin origin;
  int fd;               /* with KCACHE_GET_FD: read-only fd owned by this struct; else -1 */
} kcache_module;

typedef struct kcache_error {
  uint32_t size; /* sizeof(kcache_error), set by _init */
  int code;      /* the KCACHE_E* code */
  char* message; /* one line naming the bad input or limit */
  char* log;     /* compiler log for KCACHE_ECOMPILE, else NULL */
} kcache_error;

KCACHE_API void kcache_client_options_init(kcache_client_options* options);
KCACHE_API void kcache_request_init(kcache_request* request);
KCACHE_API void kcache_module_init(kcache_module* module);
KCACHE_API void kcache_error_init(kcache_error* error);

/* Frees the strings of a module and closes its fd; leaves it as after _init. */
KCACHE_API void kcache_module_clear(kcache_module* module);
KCACHE_API void kcache_error_clear(kcache_error* error);
KCACHE_API void kcache_free(void* pointer);

/* Creates a client. Does not connect: the first request does. options may be NULL. */
KCACHE_API int kcache_client_new(const kcache_client_options* options, kcache_client** client);
KCACHE_API void kcache_client_free(kcache_client* client);

/* Resolves, serves or compiles a module. error may be NULL. */
KCACHE_API int kcache_get(kcache_client* client, const kcache_request* request,
                          kcache_module* module, kcache_error* error);

/* A control operation ("status", "list", "verify", …) with a JSON request (NULL: "{}").
 * On success *reply_json is a NUL-terminated JSON document to free with kcache_free(). */
KCACHE_API int kcache_control(kcache_client* client, const char* operation,
                              const char* request_json, char** reply_json, kcache_error* error);

/* The counters of one client handle, in order: X(field, what it counts). The struct below,
 * the C++ ClientStats and libkcache itself take the list from here. */
#define KCACHE_CLIENT_STATS(X)                                                      \
  X(requests, "kcache_get and kcache_control calls that reached the network")       \
  X(connects, "connections opened (each with its hello handshake)")                 \
  X(reconnects, "requests retried on a fresh connection after a broken one")        \
  X(key_lookups, "key-only lookups sent (the source stayed home)")                  \
  X(need_source, "key-only lookups that missed, so the source was sent")            \
  X(timeouts, "requests that failed with KCACHE_ETIMEDOUT")                         \
  X(fallbacks, "in-process compiles (KCACHE_CLIENT_FALLBACK)")

/* Counters of one client handle, cumulative since kcache_client_new (relaxed snapshots). */
typedef struct kcache_client_stats {
  uint32_t size; /* sizeof(kcache_client_stats), set by _init */
#define KCACHE_STATS_FIELD_(field, what) uint64_t field;
  KCACHE_CLIENT_STATS(KCACHE_STATS_FIELD_)
#undef KCACHE_STATS_FIELD_
} kcache_client_stats;

KCACHE_API void kcache_client_stats_init(kcache_client_stats* stats);
KCACHE_API int kcache_client_get_stats(kcache_client* client, kcache_client_stats* stats);

/* A static, lowercase description of a code ("not found", "compile error", …). */
KCACHE_API const char* kcache_strerror(int code);
/* The library's version, e.g. "0.1.0". */
KCACHE_API const char* kcache_version(void);

#ifdef __cplusplus
}
#endif

#endif /* KCACHE_KCACHE_H */
