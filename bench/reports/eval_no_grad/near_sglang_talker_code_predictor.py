# Source: https://github.com/sgl-project/sglang-omni/pull/1720
# Report: Talker.forward was @torch.no_grad() but the runner's post_prefill later called code_predictor_forward under the thread's grad mode; its writes into buffers kept on the model retained autograd graphs and live tensor memory grew ~170 MiB per 50 requests
# Shape: the merged fix: code_predictor_forward itself is decorated with @torch.no_grad(), so the buffer writes hold plain values whatever the caller's grad mode
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class CodePredictor(nn.Module):
    def __init__(self, hidden, codebook, groups):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(hidden, codebook) for _ in range(groups))
        self.embed = nn.ModuleList(nn.Embedding(codebook, hidden) for _ in range(groups))


class Qwen3OmniTalker(nn.Module):
    def __init__(self, backbone, hidden=1024, codebook=2048, groups=16, max_slots=256):
        super().__init__()
        self.backbone = backbone
        self.num_code_groups = groups
        self.code_predictor = CodePredictor(hidden, codebook, groups)
        self.register_buffer("code_cache", torch.zeros(max_slots, groups, hidden), persistent=False)

    @torch.no_grad()
    def forward(self, input_embeds, positions):
        return self.backbone(input_embeds, positions)

    @torch.no_grad()
    def code_predictor_forward(self, hidden_states, req_slots):
        codes = torch.empty(hidden_states.shape[0], self.num_code_groups,
                            dtype=torch.long, device=hidden_states.device)
        for g in range(self.num_code_groups):
            ctx = hidden_states + self.code_cache[req_slots].sum(dim=1)
            logits = self.code_predictor.heads[g](ctx)
            codes[:, g] = logits.argmax(dim=-1)
            self.code_cache[req_slots, g] = self.code_predictor.embed[g](codes[:, g])
        return codes


class QwenTalkerModelRunner:
    def __init__(self, model: Qwen3OmniTalker):
        self.model = model.eval()

    def post_prefill(self, batch):
        hidden_states = self.model(batch["input_embeds"], batch["positions"])
        codes = self.model.code_predictor_forward(hidden_states[:, -1], batch["req_slots"])
        return codes.tolist()
