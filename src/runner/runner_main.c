/* ksearch-runner: executes one compiled kernel inside the sandbox (see src/eval/). */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "ksearch-runner: not yet wired\n");
	return 2;
}
