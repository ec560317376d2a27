// Debian's librdkafka-dev 2.0.2 headers; at run time the loader picks up a
// librdkafka >= 2.1 (see docs/operations.md): 2.0.2's runtime cannot talk to Tansu.
#include <librdkafka/rdkafka.h>
