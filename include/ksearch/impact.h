/* The axes along which an action or a knob is expected to help (K-Search's "impacts").
 * Shared by the world model (ksearch/world.h) and knob templates (ksearch/template.h)
 * without either including the other. */
#ifndef KSEARCH_IMPACT_H
#define KSEARCH_IMPACT_H

/* X(ENUM_SUFFIX, "name as written in documents and templates") */
#define KS_IMPACT_LIST(X)                                                                   \
	X(MEMORY_BANDWIDTH, "memory_bandwidth")                                              \
	X(REGISTER_PRESSURE, "register_pressure")                                            \
	X(COMPUTE_HW_FIT, "compute_hw_fit")

enum ks_impact_kind {
#define KS_IMPACT_ENUM_(id, name) KS_IMPACT_##id,
	KS_IMPACT_LIST(KS_IMPACT_ENUM_)
#undef KS_IMPACT_ENUM_
	KS_IMPACT_COUNT,
};

#endif
