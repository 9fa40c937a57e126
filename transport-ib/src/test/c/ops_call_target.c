/*
 * Functions with the exact C signatures of the four data-path verbs in ibv_context_ops, for OpsCallTest:
 * each returns a value computed from all of its arguments, so a swapped, truncated or missing argument shows.
 */
#include <stdint.h>

struct fake_wr { uint64_t wr_id; struct fake_wr *next; };

/* post_send / post_recv shape: walks the chain, stores the last WR in *bad, returns the count plus the qp tag */
int fake_post(void *qp, struct fake_wr *wr, struct fake_wr **bad)
{
    int n = 0;
    struct fake_wr *last = 0;
    for (; wr; wr = wr->next) { n++; last = wr; }
    *bad = last;
    return n + (int)(*(uint64_t *)qp);
}

/* poll_cq shape: writes num_entries wr_ids, returns num_entries * 10 + the cq tag */
int fake_poll(void *cq, int num_entries, uint64_t *wc)
{
    for (int i = 0; i < num_entries; i++) wc[i] = 1000 + i;
    return num_entries * 10 + (int)(*(uint64_t *)cq);
}

/* req_notify_cq shape */
int fake_notify(void *cq, int solicited_only)
{
    return solicited_only * 100 + (int)(*(uint64_t *)cq);
}
