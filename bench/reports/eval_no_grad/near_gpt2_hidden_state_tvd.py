# Source: https://github.com/huggingface/transformers/issues/2595
# Report: retrieving per-layer hidden states from a trained GPT-2 in nested loops (to compute a total-variation distance per layer) makes RAM grow without bound; no torch.no_grad() around the forward calls.
# Shape: same nested scoring helper, but decorated with @torch.no_grad(), so the forwards build no graph and the preallocated result tensor only receives plain values.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def layer_tvd(h_a: torch.Tensor, h_b: torch.Tensor) -> torch.Tensor:
    p = F.softmax(h_a, dim=-1)
    q = F.softmax(h_b, dim=-1)
    return 0.5 * (p - q).abs().sum()


@torch.no_grad()
def tvd_loop(test_ids: torch.Tensor, dummy_ids: torch.Tensor, n_layer: int, best_model, n_dummy: int):
    seq_len, n_samples = test_ids.shape
    best_model.eval()
    tvd_tensor = torch.full((n_samples, n_layer + 1, n_dummy), -2.0)

    for m in range(n_samples):
        input_ids = test_ids[:, m].unsqueeze(0)
        for j in range(n_layer + 1):
            outputs = best_model(input_ids, output_hidden_states=True)
            hidden = outputs.hidden_states[j][0, seq_len - 1, :]

            for k, col in enumerate(range(m * n_dummy, (m + 1) * n_dummy)):
                dummy = dummy_ids[:, col].unsqueeze(0)
                dummy_out = best_model(dummy, output_hidden_states=True)
                hidden_dummy = dummy_out.hidden_states[j][0, seq_len - 1, :]
                tvd_tensor[m, j, k] = layer_tvd(hidden, hidden_dummy)

    return tvd_tensor


def summarize(tvd_tensor: torch.Tensor):
    valid = tvd_tensor[tvd_tensor >= 0]
    return {"mean_tvd": valid.mean().item(), "max_tvd": valid.max().item()}
