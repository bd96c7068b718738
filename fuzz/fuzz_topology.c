/* fuzz_topology.c — topology strings (a pool's .topology, FORKSCOPE_TOPOLOGY, a config's
 * "topology", `forkscope topology`): "synthetic:DESC" for hwloc's synthetic descriptions,
 * "xml:PATH" for hwloc XML files, and anything else, which must be refused with a message.
 * The first byte gives the workers (1-64) and the placement (compact, spread, none); the
 * rest is the string.  With the first byte's top bits both set, the rest is a synthetic
 * description that hwloc exports as XML, and the topology is loaded from that file as
 * "xml:PATH" (XML of every shape hwloc accepts; hwloc 2.9's XML importer itself crashes on
 * some malformed files, see fuzz/README.md, so raw bytes are not given to it).  A topology
 * that loads must hold together: fk_topology_describe prints every worker's place, node and
 * victim groups. */
#include "fuzz/fuzz.h"
#include "forkscope.h"

#include <hwloc.h>

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    sink = fopen("/dev/null", "w");
    return sink ? 0 : -1;
}

/* desc exported as XML into the scratch directory: its path, or NULL if hwloc refuses it. */
static const char *synthetic_xml(const char *desc) {
    static char path[PATH_MAX];
    hwloc_topology_t t;
    if (hwloc_topology_init(&t))
        return NULL;
    const char *out = NULL;
    if (!hwloc_topology_set_synthetic(t, desc) && !hwloc_topology_load(t) &&
        !hwloc_topology_export_xml(t, fz_path("topo.xml", path, sizeof path), 0))
        out = path;
    hwloc_topology_destroy(t);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 4096)
        return 0;
    fk_pool_opts o;
    fk_pool_opts_init(&o);
    o.workers = 1 + data[0] % 64;
    o.placement = (fk_placement)(data[0] / 64 % 3);
    char *text = fz_str(data + 1, size - 1), *spec = text;
    char err[512];
    if (data[0] >= 192) { /* first as a synthetic description: the size limits apply */
        char *syn = malloc(strlen(text) + 11);
        if (!syn)
            abort();
        sprintf(syn, "synthetic:%s", text);
        o.topology = syn;
        int rc = fk_topology_describe(&o, sink, err, sizeof err);
        free(syn);
        const char *xml = rc ? NULL : synthetic_xml(text);
        if (!xml) {
            free(text);
            return 0;
        }
        spec = malloc(strlen(xml) + 5);
        if (!spec)
            abort();
        sprintf(spec, "xml:%s", xml);
    }
    o.topology = spec;
    fk_topology_describe(&o, sink, err, sizeof err);
    if (spec != text)
        free(spec);
    free(text);
    return 0;
}
