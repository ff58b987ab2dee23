/* The exporters registered in registry.c. */
#ifndef KS_EXPORT_EXPORTERS_H
#define KS_EXPORT_EXPORTERS_H

#include "ksearch/export.h"

extern const struct ks_exporter_i ks_exporter_mlx;

#endif
