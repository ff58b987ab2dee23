// What the kernel text costs MLX on every call, on this machine's CPU: the work MLX 0.32's
// CUDA custom kernel does with it per call (custom_kernel.cpp: build_kernel copies the
// header and body into a new source string; eval_gpu hashes all of it to name the module),
// timed on the text as the kernel file has it (includes resolved) and as ksearch hands it
// to MLX (ks_mlx_compact).  `--compact FILE` prints FILE compacted (bench/mlx/compact_check.sh).  A model of MLX's string work, not MLX itself: built and run by
// bench/mlx/text_cost.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "backend/mlx_kernel.h"
#include "util/fs.h"
}

static std::string between(const std::string &s, const char *a, const char *b)
{
	size_t i = s.find(a), j = s.find(b);
	if (i == std::string::npos || j == std::string::npos)
		return "";
	i = s.find('\n', i) + 1;
	return s.substr(i, s.rfind('\n', j) + 1 - i);
}

// median microseconds of one call's string work over `reps` blocks of `n` calls
static double per_call_us(const std::string &header, const std::string &body)
{
	const int n = 2000, reps = 15;
	std::vector<double> t;
	size_t sink = 0;
	for (int r = 0; r < reps; r++) {
		auto t0 = std::chrono::steady_clock::now();
		for (int i = 0; i < n; i++) {
			std::string src;
			src.reserve(header.size() + body.size() + 8192);
			src += "\n#include \"mlx/backend/cuda/device/utils.cuh\"\n";
			src += header;
			src += "namespace mlx::core::cu {\n__global__ void custom_kernel(...) {\n";
			src += body;
			src += "\n}\n}\n";
			sink += std::hash<std::string>{}(src);
		}
		auto t1 = std::chrono::steady_clock::now();
		t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
	}
	std::sort(t.begin(), t.end());
	if (sink == 42)
		std::puts("");
	return t[reps / 2];
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: text_cost TASK_DIR KERNEL.mlx | text_cost --compact FILE\n");
		return 2;
	}
	struct ks_buf file = KS_BUF_INIT, resolved = KS_BUF_INIT;
	struct ks_error e = {};
	if (!std::strcmp(argv[1], "--compact")) { /* FILE as MLX would get it, to stdout */
		if (ks_file_read(argv[2], 1 << 24, &file, &e)) {
			std::fprintf(stderr, "text_cost: %s: %s\n", argv[2], e.msg);
			return 1;
		}
		ks_mlx_compact(file.data);
		std::fputs(ks_buf_str(&file), stdout);
		ks_buf_release(&file);
		return 0;
	}
	if (ks_file_read(argv[2], 1 << 24, &file, &e) ||
	    ks_mlx_resolve_includes(argv[1], ks_buf_str(&file), nullptr, &resolved, &e)) {
		std::fprintf(stderr, "text_cost: %s: %s\n", argv[2], e.msg);
		return 1;
	}
	std::string text = ks_buf_str(&resolved);
	std::string header = between(text, "@mlx header", "@mlx body");
	std::string body = text.substr(text.find('\n', text.find("@mlx body")) + 1);
	std::vector<char> h(header.begin(), header.end()), b(body.begin(), body.end());
	h.push_back('\0');
	b.push_back('\0');
	ks_mlx_compact(h.data());
	ks_mlx_compact(b.data());
	std::string ch = h.data(), cb = b.data();
	double full = per_call_us(header, body), small = per_call_us(ch, cb);
	std::printf("| %s | %zu | %.2f | %zu | %.2f | %.2f |\n", argv[2], header.size() + body.size(),
		    full, ch.size() + cb.size(), small, full - small);
	ks_buf_release(&file);
	ks_buf_release(&resolved);
	return 0;
}
