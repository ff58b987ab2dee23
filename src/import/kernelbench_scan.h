/* The Python that `ksearch tasks import kernelbench` runs on a problem file, inside the jail
 * (src/import/kernelbench/scan.py, compiled in by CMake as ks_kernelbench_scan).  argv: the
 * exchange folder (problem.py in it), the scale, NAME=VALUE overrides.  It writes
 * result.json there:
 *   doc: "..."                                Model's docstring
 *   params: [{name, value}]                   module-level sizes the shapes use, file order
 *   scalars: [{name, arg, value, type}]       numbers forward() takes (f32 or i32 params)
 *   inputs: [{name, arg, path, dtype, torch, shape: [expr], init}]   forward()'s tensors,
 *                                             then the modules' parameters (path set, arg null)
 *   outputs: [{name, dtype, shape: [expr]}] or null (unknown without torch)
 *   flops: "expr"
 *   c: {head, body} or null                   the naive kernel: includes, the entry's body
 *   numpy: "def _ks_numpy_reference(kw): ..." or null
 *   shipped: {task, params: [{name, value}], inputs: [names], output} or null
 *   ew: true when forward is elementwise in its one input
 *   notes: ["..."]                            where the workload differs from the problem
 *   unrecognised: "..."                       what the interpreter did not know
 *   error: "..."                              when the file is not a problem it can read */
#ifndef KS_TASK_KERNELBENCH_SCAN_H
#define KS_TASK_KERNELBENCH_SCAN_H

#include "kernelbench_scan_py.h"

#endif
