# Source: https://github.com/huggingface/transformers/issues/2595
# Report: retrieving per-layer hidden states from a trained GPT-2 in nested loops (to compute a total-variation distance per layer) makes RAM grow without bound; no torch.no_grad() around the forward calls.
# Shape: a scoring helper runs the model twice per (sample, layer, dummy) with grad on and writes each graph-attached distance into a preallocated result tensor created before the loops.
# Expect: TML003 line 23; TML003 line 28; TML001 line 30
import torch
import torch.nn.functional as F


def layer_tvd(h_a: torch.Tensor, h_b: torch.Tensor) -> torch.Tensor:
    p = F.softmax(h_a, dim=-1)
    q = F.softmax(h_b, dim=-1)
    return 0.5 * (p - q).abs().sum()


def tvd_loop(test_ids: torch.Tensor, dummy_ids: torch.Tensor, n_layer: int, best_model, n_dummy: int):
    seq_len, n_samples = test_ids.shape
    best_model.eval()
    tvd_tensor = torch.full((n_samples, n_layer + 1, n_dummy), -2.0)

    for m in range(n_samples):
        input_ids = test_ids[:, m].unsqueeze(0)
        for j in range(n_layer + 1):
            outputs = best_model(input_ids, output_hidden_states=True)  # expect: TML003
            hidden = outputs.hidden_states[j][0, seq_len - 1, :]

            for k, col in enumerate(range(m * n_dummy, (m + 1) * n_dummy)):
                dummy = dummy_ids[:, col].unsqueeze(0)
                dummy_out = best_model(dummy, output_hidden_states=True)  # expect: TML003
                hidden_dummy = dummy_out.hidden_states[j][0, seq_len - 1, :]
                tvd_tensor[m, j, k] = layer_tvd(hidden, hidden_dummy)  # expect: TML001

    return tvd_tensor


def summarize(tvd_tensor: torch.Tensor):
    valid = tvd_tensor[tvd_tensor >= 0]
    return {"mean_tvd": valid.mean().item(), "max_tvd": valid.max().item()}
