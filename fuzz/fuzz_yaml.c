/* fuzz/fuzz_yaml.c - libFuzzer target: arbitrary bytes through the YAML
 * document decoder (berth_doc_load_buffer: libyaml events into a located
 * tree, anchors and aliases, depth and size limits), then through each
 * domain's loader (berth_nexus_load, berth_kube_load, berth_fleet_load),
 * freeing everything. Seeds: fuzz/corpus/yaml/. Run with `make fuzz`. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_one(data, size, 0);
}
