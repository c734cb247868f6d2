/* fuzz/fuzz_json.c - libFuzzer target for JSON-shaped input, as `berth
 * serve` receives it in request bodies. The server's body parsing
 * (serve/engine.c parse_estate, parse_cluster) is not callable in
 * isolation, so this target runs the same steps: the document decoder
 * (JSON is read as YAML flow style), each domain loader, and for nexus
 * input what PUT /v1/estate does next (berth_nexus_validate,
 * berth_nexus_prepare). Seeds: fuzz/corpus/json/ (JSON versions of the
 * examples). Run with `make fuzz`. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_one(data, size, 1);
}
