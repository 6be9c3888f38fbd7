# Modelled on: https://github.com/pytorch/pytorch/issues/1887
# Report: near-miss: feeding a GRU its own output step after step is fine when decoding under no_grad.
import torch


@torch.no_grad()
def greedy_decode(decoder, embed, hidden, sos_token, max_len=50):
    token = torch.tensor([[sos_token]], device=hidden.device)
    result = []
    for _ in range(max_len):
        out, hidden = decoder(embed(token), hidden)
        token = out.argmax(-1)
        result.append(token.item())
    return result
