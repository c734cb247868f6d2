/* tests/tools/estate_check.c - checks a GET /v1/estate document (SPEC 6.3
 * simulate JSON): no NUMA cell is over capacity, every pool of every cluster
 * is fully placed, no cluster or VM name appears twice; prints
 * "clusters N vms N" on success.
 * usage: estate_check FILE [NAMES_FILE]  (NAMES_FILE: cluster names that
 * must each be present exactly once). Exit 0 ok, 1 violation, 2 usage. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: estate_check FILE [NAMES_FILE]\n");
        return 2;
    }
    json_error_t je;
    json_t *root = json_load_file(argv[1], 0, &je);
    if (!root) {
        fprintf(stderr, "estate_check: %s:%d: %s\n", argv[1], je.line, je.text);
        return 2;
    }
    int bad = 0;
    size_t i, k;
    json_t *m, *c;
    json_array_foreach(json_object_get(root, "machines"), i, m) {
        json_array_foreach(json_object_get(m, "cells"), k, c) {
            json_int_t cpu = json_integer_value(json_object_get(c, "cpu"));
            json_int_t used = json_integer_value(json_object_get(c, "usedCpu"));
            json_int_t mem = json_integer_value(json_object_get(c, "memory"));
            json_int_t umem = json_integer_value(json_object_get(c, "usedMemory"));
            if (used > cpu || umem > mem || used < 0 || umem < 0) {
                fprintf(stderr, "estate_check: machine %s cell %zu over capacity: cpu %lld/%lld "
                                "memory %lld/%lld\n",
                        json_string_value(json_object_get(m, "name")), k, (long long)used,
                        (long long)cpu, (long long)umem, (long long)mem);
                bad = 1;
            }
        }
    }
    json_t *clusters = json_object_get(root, "clusters");
    json_t *seen = json_object(), *vmseen = json_object();
    size_t nvms = 0;
    json_array_foreach(clusters, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (!name || json_object_get(seen, name)) {
            fprintf(stderr, "estate_check: cluster %s listed twice\n", name ? name : "?");
            bad = 1;
            continue;
        }
        json_object_set_new(seen, name, json_true());
        json_t *p;
        json_array_foreach(json_object_get(c, "pools"), k, p) {
            size_t v;
            json_t *vm;
            if (json_integer_value(json_object_get(p, "placed")) !=
                json_integer_value(json_object_get(p, "count"))) {
                fprintf(stderr, "estate_check: cluster %s pool not fully placed\n", name);
                bad = 1;
            }
            json_array_foreach(json_object_get(p, "vms"), v, vm) {
                const char *vn = json_string_value(json_object_get(vm, "name"));
                if (!vn || json_object_get(vmseen, vn)) {
                    fprintf(stderr, "estate_check: VM %s listed twice\n", vn ? vn : "?");
                    bad = 1;
                } else {
                    json_object_set_new(vmseen, vn, json_true());
                }
                nvms++;
            }
        }
    }
    if (argc > 2) {
        FILE *f = fopen(argv[2], "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = 0;
            if (*line && !json_object_get(seen, line)) {
                fprintf(stderr, "estate_check: acknowledged cluster %s is missing\n", line);
                bad = 1;
            }
        }
        if (f)
            fclose(f);
        else {
            perror(argv[2]);
            bad = 1;
        }
    }
    if (!bad)
        printf("clusters %zu vms %zu\n", json_object_size(seen), nvms);
    json_decref(seen);
    json_decref(vmseen);
    json_decref(root);
    return bad;
}
