/*
 * Writes a synthetic Score-P-like OTF2 archive with the real OTF2 library, for
 * grove's OTF2 benchmark (docs/performance.md) and for checking the reader against
 * otf2-print on something larger than the corpus.
 *
 * Build (Debian: libopen-trace-format2-dev or libotf2-trace-dev, which bring
 * otf2-config):
 *   gcc -O2 scripts/otf2_gen.c -o /tmp/otf2_gen $(otf2-config --cflags --ldflags --libs)
 * Run:
 *   /tmp/otf2_gen DIR RANKS EVENTS [papi] [gpu]
 * writes DIR/traces.otf2 (+ traces.def, traces/N.evt) with RANKS MPI ranks of one
 * thread each and at least EVENTS events in all: per iteration of a loop, a `solve`
 * region around 4 compute kernels, an MPI_Send and an MPI_Recv with their message
 * records. With `papi`, a synchronous PAPI_TOT_CYC counter record precedes every
 * Enter and Leave, as Score-P writes them. With `gpu`, each rank also has a CUDA
 * stream (an accelerator-stream location in an accelerator location group) running a
 * kernel per iteration. Deterministic: the same arguments give
 * the same bytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

static OTF2_FlushType pre_flush(void* d, OTF2_FileType t, OTF2_LocationRef l, void* c, bool f)
{
    (void)d; (void)t; (void)l; (void)c; (void)f;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void* d, OTF2_FileType t, OTF2_LocationRef l)
{
    (void)d; (void)t; (void)l;
    return 0;
}

static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush };

enum { R_MAIN, R_SOLVE, R_C0, R_C1, R_C2, R_C3, R_SEND, R_RECV, R_INIT, R_FINALIZE, R_KERNEL, N_REGIONS };
static const char* region_names[N_REGIONS] = {
    "int main(int, char**)", "solve", "compute_flux", "compute_residual", "update_halo",
    "apply_bc", "MPI_Send", "MPI_Recv", "MPI_Init", "MPI_Finalize", "flux_kernel"
};

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char** argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DIR RANKS EVENTS [papi]\n", argv[0]);
        return 2;
    }
    const char* dir = argv[1];
    int ranks = atoi(argv[2]);
    uint64_t target = strtoull(argv[3], NULL, 10);
    int papi = 0, gpu = 0;
    for (int i = 4; i < argc; i++) {
        papi |= strcmp(argv[i], "papi") == 0;
        gpu |= strcmp(argv[i], "gpu") == 0;
    }
    if (ranks < 1) ranks = 1;

    OTF2_Archive* archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                              4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                                              OTF2_COMPRESSION_NONE);
    OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(archive);
    OTF2_Archive_SetCreator(archive, "grove otf2_gen");
    OTF2_Archive_OpenEvtFiles(archive);

    const uint64_t offset = 1000000000ULL;
    uint64_t per_rank = (target + ranks - 1) / ranks;
    uint64_t* counts = calloc(2 * ranks, sizeof(uint64_t));
    uint64_t* iterations = calloc(ranks, sizeof(uint64_t));
    uint64_t t_end = offset;
    for (int r = 0; r < ranks; r++) {
        OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, r);
        uint64_t t = offset + (next() % 1000);
        uint64_t n = 0, cyc = 0;
        OTF2_Type types[1] = { OTF2_TYPE_UINT64 };
        OTF2_MetricValue v[1];
#define METRIC() do { if (papi) { cyc += 1 + next() % 5000; v[0].unsigned_int = cyc; \
            OTF2_EvtWriter_Metric(w, NULL, t, 0, 1, types, v); n++; } } while (0)
#define ENTER(reg) do { METRIC(); OTF2_EvtWriter_Enter(w, NULL, t, reg); n++; t += 50 + next() % 2000; } while (0)
#define LEAVE(reg) do { METRIC(); OTF2_EvtWriter_Leave(w, NULL, t, reg); n++; t += 50 + next() % 500; } while (0)
        ENTER(R_MAIN);
        ENTER(R_INIT);
        LEAVE(R_INIT);
        int peer = (r + 1) % ranks;
        while (n + 40 < per_rank) {
            ENTER(R_SOLVE);
            for (int k = 0; k < 4; k++) {
                ENTER(R_C0 + k);
                LEAVE(R_C0 + k);
            }
            uint64_t bytes = 1024 << (next() % 8);
            ENTER(R_SEND);
            OTF2_EvtWriter_MpiSend(w, NULL, t, peer, 0, 10, bytes);
            n++;
            LEAVE(R_SEND);
            ENTER(R_RECV);
            OTF2_EvtWriter_MpiRecv(w, NULL, t, (r + ranks - 1) % ranks, 0, 10, bytes);
            n++;
            LEAVE(R_RECV);
            LEAVE(R_SOLVE);
            iterations[r]++;
        }
        ENTER(R_FINALIZE);
        LEAVE(R_FINALIZE);
        LEAVE(R_MAIN);
        counts[r] = n;
        if (t > t_end) t_end = t;
        OTF2_Archive_CloseEvtWriter(archive, w);
    }
    if (gpu) {
        for (int r = 0; r < ranks; r++) {
            OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, ranks + r);
            uint64_t t = offset + 5000;
            for (uint64_t i = 0; i < iterations[r]; i++) {
                OTF2_EvtWriter_Enter(w, NULL, t, R_KERNEL);
                t += 1000 + next() % 20000;
                OTF2_EvtWriter_Leave(w, NULL, t, R_KERNEL);
                t += 100 + next() % 3000;
            }
            counts[ranks + r] = 2 * iterations[r];
            if (t > t_end) t_end = t;
            OTF2_Archive_CloseEvtWriter(archive, w);
        }
    }
    OTF2_Archive_CloseEvtFiles(archive);

    OTF2_Archive_OpenDefFiles(archive);
    for (int r = 0; r < (gpu ? 2 : 1) * ranks; r++) {
        OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, r);
        OTF2_Archive_CloseDefWriter(archive, dw);
    }
    OTF2_Archive_CloseDefFiles(archive);

    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    OTF2_GlobalDefWriter_WriteClockProperties(g, 2100000000ULL, offset, t_end - offset,
                                              OTF2_UNDEFINED_TIMESTAMP);
    uint32_t s = 0;
    OTF2_GlobalDefWriter_WriteString(g, s++, "");
    for (int i = 0; i < N_REGIONS; i++) {
        OTF2_GlobalDefWriter_WriteString(g, s, region_names[i]);
        int mpi = i >= R_SEND && i != R_KERNEL;
        OTF2_GlobalDefWriter_WriteRegion(g, i, s, s, 0,
                                         mpi ? OTF2_REGION_ROLE_POINT2POINT : OTF2_REGION_ROLE_FUNCTION,
                                         i == R_KERNEL ? OTF2_PARADIGM_CUDA
                                         : mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_COMPILER,
                                         OTF2_REGION_FLAG_NONE, 0, 0, 0);
        s++;
    }
    uint32_t machine = s++, node = s++, thread = s++, world = s++;
    OTF2_GlobalDefWriter_WriteString(g, machine, "machine");
    OTF2_GlobalDefWriter_WriteString(g, node, "node0");
    OTF2_GlobalDefWriter_WriteString(g, thread, "Master thread");
    OTF2_GlobalDefWriter_WriteString(g, world, "MPI_COMM_WORLD");
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, node, machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (int r = 0; r < ranks; r++) {
        char name[64];
        snprintf(name, sizeof name, "MPI Rank %d", r);
        OTF2_GlobalDefWriter_WriteString(g, s, name);
        OTF2_GlobalDefWriter_WriteLocationGroup(g, r, s, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                OTF2_UNDEFINED_LOCATION_GROUP);
        s++;
    }
    if (gpu) {
        uint32_t stream = s++;
        OTF2_GlobalDefWriter_WriteString(g, stream, "CUDA[0:7]");
        for (int r = 0; r < ranks; r++) {
            char name[64];
            snprintf(name, sizeof name, "CUDA device %d", r);
            OTF2_GlobalDefWriter_WriteString(g, s, name);
            OTF2_GlobalDefWriter_WriteLocationGroup(g, ranks + r, s, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                                    0, r);
            s++;
        }
        for (int r = 0; r < ranks; r++) {
            OTF2_GlobalDefWriter_WriteLocation(g, ranks + r, stream, OTF2_LOCATION_TYPE_ACCELERATOR_STREAM,
                                               counts[ranks + r], ranks + r);
        }
    }
    for (int r = 0; r < ranks; r++) {
        OTF2_GlobalDefWriter_WriteLocation(g, r, thread, OTF2_LOCATION_TYPE_CPU_THREAD, counts[r], r);
    }
    uint64_t* members = malloc(ranks * sizeof(uint64_t));
    for (int r = 0; r < ranks; r++) members[r] = r;
    OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, ranks, members);
    OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, ranks, members);
    OTF2_GlobalDefWriter_WriteComm(g, 0, world, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    if (papi) {
        uint32_t cyc = s++, unit = s++;
        OTF2_GlobalDefWriter_WriteString(g, cyc, "PAPI_TOT_CYC");
        OTF2_GlobalDefWriter_WriteString(g, unit, "#");
        OTF2_GlobalDefWriter_WriteMetricMember(g, 0, cyc, 0, OTF2_METRIC_TYPE_PAPI,
                                               OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
                                               OTF2_BASE_DECIMAL, 0, unit);
        OTF2_MetricMemberRef m[1] = { 0 };
        OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, m, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                              OTF2_RECORDER_KIND_CPU);
    }
    OTF2_Archive_Close(archive);
    uint64_t total = 0;
    for (int r = 0; r < 2 * ranks; r++) total += counts[r];
    printf("%s: %d ranks, %" PRIu64 " events\n", dir, ranks, total);
    free(counts);
    free(iterations);
    free(members);
    return 0;
}
