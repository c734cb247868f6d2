/* nexus/catalog.c - the built-in Operator Nexus VM SKU catalog (SPEC 1.2)
 * and SKU lookup. User VmSku documents add to or override it. */
#include "berth/nexus.h"

#include <string.h>

#define GiB (1024LL * 1024 * 1024)

static const struct {
    const char *name;
    int32_t vcpu, host;
    int64_t gib;
    int32_t cells;
    int xl;
} builtin[] = {
    {"NC_G56_224_v1", 56, 56, 224, 1, 1}, {"NC_P54_224_v1", 54, 56, 224, 1, 1},
    {"NC_G48_224_v1", 48, 48, 224, 1, 1}, {"NC_P46_224_v1", 46, 48, 224, 1, 1},
    {"NC_G42_168_v1", 42, 42, 168, 1, 0}, {"NC_P40_168_v1", 40, 42, 168, 1, 0},
    {"NC_G36_168_v1", 36, 36, 168, 1, 0}, {"NC_P34_168_v1", 34, 36, 168, 1, 0},
    {"NC_G28_112_v1", 28, 28, 112, 1, 0}, {"NC_P26_112_v1", 26, 28, 112, 1, 0},
    {"NC_G24_112_v1", 24, 24, 112, 1, 0}, {"NC_P22_112_v1", 22, 24, 112, 1, 0},
    {"NC_G18_74_v1", 18, 18, 74, 1, 0},   {"NC_P16_74_v1", 16, 18, 74, 1, 0},
    {"NC_G16_74_v1", 16, 16, 74, 1, 0},   {"NC_P14_74_v1", 14, 16, 74, 1, 0},
    {"NC_G14_56_v1", 14, 14, 56, 1, 0},   {"NC_P12_56_v1", 12, 14, 56, 1, 0},
    {"NC_G12_56_v1", 12, 12, 56, 1, 0},   {"NC_P10_56_v1", 10, 12, 56, 1, 0},
    {"NC_G6_28_v1", 6, 6, 28, 1, 0},      {"NC_P4_28_v1", 4, 6, 28, 1, 0},
    {"NC_G2_8_v1", 2, 2, 8, 1, 0},
    {"NC_E110_448_v1", 110, 112, 448, 2, 0}, {"NC_E94_448_v1", 94, 96, 448, 2, 0},
    {"NC_E70_336_v1", 70, 72, 336, 2, 0},
};

uint32_t berth_nexus_find_sku(const berth_nexus *nx, const char *name)
{
    for (uint32_t i = 0; i < nx->nskus; i++)
        if (strcmp(nx->skus[i].name, name) == 0)
            return i;
    return BERTH_NEXUS_NONE;
}

int berth_nexus_add_builtin_skus(berth_nexus *nx)
{
    size_t n = sizeof builtin / sizeof builtin[0];
    for (size_t i = 0; i < n; i++) {
        if (berth_nexus_find_sku(nx, builtin[i].name) != BERTH_NEXUS_NONE)
            continue;
        if (nx->nskus == nx->capskus)
            return BERTH_ELIMIT;
        berth_sku *s = &nx->skus[nx->nskus++];
        s->name = builtin[i].name;
        s->vcpu = builtin[i].vcpu;
        s->host_vcpu = builtin[i].host;
        s->memory = builtin[i].gib * GiB;
        s->numa_cells = builtin[i].cells;
        s->extra_large = builtin[i].xl;
        s->builtin = 1;
    }
    return 0;
}
