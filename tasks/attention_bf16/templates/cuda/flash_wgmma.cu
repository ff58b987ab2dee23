// attention with bf16 q, k, v, o: templates/cuda/flash_wgmma.cu of tasks/attention with ATTN_BF16 1
#define ATTN_BF16 1
#define ATTN_FN attention_bf16
// @ksearch include: ../../../attention/templates/cuda/flash_wgmma.cu
