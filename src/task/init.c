/* filled in by the task module */
typedef int ks_placeholder_init;
