/* core/arena.c - the bump allocator behind every run's objects, and the
 * scratch arenas a streamed load empties (reset) or keeps (adopt). */
#include "berth/arena.h"
#include "berth/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct berth_arena_block {
    berth_arena_block *prev;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_MIN_BLOCK (64u * 1024u)

void berth_arena_init(berth_arena *a, size_t cap)
{
    a->head = NULL;
    a->used_total = 0;
    a->cap = cap;
}

void *berth_arena_alloc(berth_arena *a, size_t size)
{
    size_t need = (size + 15u) & ~(size_t)15u;
    if (need < size)
        return NULL;
    if (a->cap && a->used_total + need > a->cap)
        return NULL;
    berth_arena_block *b = a->head;
    if (!b || b->size - b->used < need) {
        size_t bs = b ? b->size * 2 : ARENA_MIN_BLOCK;
        if (bs > 64u * 1024u * 1024u)
            bs = 64u * 1024u * 1024u;
        if (bs < need)
            bs = need;
        berth_arena_block *nb = malloc(sizeof *nb + bs);
        if (!nb)
            return NULL;
        berth_advise_huge(nb->data, bs); /* untouched yet: large blocks get 2 MB pages */
        nb->prev = b;
        nb->size = bs;
        nb->used = 0;
        a->head = b = nb;
    }
    void *p = b->data + b->used;
    b->used += need;
    a->used_total += need;
    memset(p, 0, size);
    return p;
}

char *berth_arena_strndup(berth_arena *a, const char *s, size_t n)
{
    char *p = berth_arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *berth_arena_strdup(berth_arena *a, const char *s)
{
    return berth_arena_strndup(a, s, strlen(s));
}

/* frees b and every older block */
static void free_chain(berth_arena_block *b)
{
    while (b) {
        berth_arena_block *p = b->prev;
        free(b);
        b = p;
    }
}

void berth_arena_free(berth_arena *a)
{
    free_chain(a->head);
    a->head = NULL;
    a->used_total = 0;
}

void berth_arena_reset(berth_arena *a)
{
    berth_arena_block *keep = a->head;
    if (!keep)
        return;
    free_chain(keep->prev);
    keep->prev = NULL;
    keep->used = 0;
    a->used_total = 0;
}

void berth_arena_adopt(berth_arena *dst, berth_arena *src)
{
    if (!src->head)
        return;
    if (!dst->head) {
        dst->head = src->head;
    } else {
        berth_arena_block *oldest = src->head;
        while (oldest->prev)
            oldest = oldest->prev;
        oldest->prev = dst->head->prev; /* src's blocks go behind dst's newest */
        dst->head->prev = src->head;
    }
    dst->used_total += src->used_total;
    src->head = NULL;
    src->used_total = 0;
}
