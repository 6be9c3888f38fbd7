# Source: https://github.com/microsoft/PyRIT/pull/2244
# Report: GCG OOM on large GPUs came from loss.backward() filling .grad for every LLM parameter; the merged fix computes only the one-hot coordinate gradient with torch.autograd.grad
# Shape: same token_gradients()/attack loop, but the gradient w.r.t. the one-hot suffix comes from torch.autograd.grad(loss, one_hot), so no parameter .grad buffers are allocated
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def embedding_matrix(model):
    return model.get_input_embeddings().weight


def token_gradients(model, input_ids, control_slice, target_slice, loss_slice):
    embed_weights = embedding_matrix(model)
    one_hot = torch.zeros(
        input_ids[control_slice].shape[0],
        embed_weights.shape[0],
        device=model.device,
        dtype=embed_weights.dtype,
    )
    one_hot.scatter_(1, input_ids[control_slice].unsqueeze(1), 1.0)
    one_hot.requires_grad_()
    control_embeds = (one_hot @ embed_weights).unsqueeze(0)
    embeds = model.get_input_embeddings()(input_ids.unsqueeze(0)).detach()
    full_embeds = torch.cat(
        [embeds[:, :control_slice.start], control_embeds, embeds[:, control_slice.stop:]], dim=1
    )
    logits = model(inputs_embeds=full_embeds).logits
    targets = input_ids[target_slice]
    loss = F.cross_entropy(logits[0, loss_slice, :], targets)
    (grad,) = torch.autograd.grad(loss, one_hot)
    return grad / grad.norm(dim=-1, keepdim=True)


def sample_candidates(control_toks, grad, batch_size, topk):
    top_indices = (-grad).topk(topk, dim=1).indices
    positions = torch.randint(0, len(control_toks), (batch_size,), device=grad.device)
    new_vals = top_indices[positions, torch.randint(0, topk, (batch_size,), device=grad.device)]
    cands = control_toks.repeat(batch_size, 1)
    cands.scatter_(1, positions.unsqueeze(1), new_vals.unsqueeze(1))
    return cands


def run_gcg(model, input_ids, control_slice, target_slice, loss_slice, num_steps=500, batch_size=256, topk=256):
    best_loss = float("inf")
    for step in range(num_steps):
        grad = token_gradients(model, input_ids, control_slice, target_slice, loss_slice)
        cands = sample_candidates(input_ids[control_slice], grad, batch_size, topk)
        with torch.no_grad():
            batch = input_ids.repeat(batch_size, 1)
            batch[:, control_slice] = cands
            logits = model(input_ids=batch).logits
            losses = F.cross_entropy(
                logits[:, loss_slice, :].transpose(1, 2),
                batch[:, target_slice],
                reduction="none",
            ).mean(dim=-1)
        idx = int(losses.argmin())
        if losses[idx].item() < best_loss:
            best_loss = losses[idx].item()
            input_ids = input_ids.clone()
            input_ids[control_slice] = cands[idx]
        if step % 50 == 0:
            print(f"step {step}: best loss {best_loss:.4f}")
    return input_ids[control_slice], best_loss
