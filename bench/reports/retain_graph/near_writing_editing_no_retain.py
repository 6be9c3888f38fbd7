# Source: https://github.com/EagleW/Writing-editing-Network/issues/3
# Report: A user asks why train_batch calls lossi.backward(retain_graph=True) on every writing/editing pass although each pass regenerates the graph; the author agrees it can be removed.
# Shape: fixed variant of train_batch: each of the num_exams passes builds its own graph, backward() frees it, the loss is logged with .item(), and the draft fed to the next pass is detached token ids (no graph carried over).
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def mask_after_eos(prev_generated_seq, eos_id=1):
    is_eos = torch.eq(prev_generated_seq, eos_id)
    lengths = torch.argmax(is_eos.int(), dim=1)
    positions = torch.arange(prev_generated_seq.size(1), device=prev_generated_seq.device)
    mask = (positions[None, :] >= lengths[:, None]) & (lengths[:, None] > 0)
    return prev_generated_seq.detach().masked_fill(mask, 0)


def train_batch(model, optimizer, criterion, input_variable, input_lengths,
                target_variable, vocab_size, num_exams=3, max_grad_norm=10.0):
    loss_list = []
    prev_generated_seq = None
    target_flat = target_variable[:, 1:].contiguous().view(-1)

    for _ in range(num_exams):
        decoder_outputs, _, _ = model(input_variable, prev_generated_seq,
                                      input_lengths, target_variable)
        lossi = criterion(decoder_outputs.view(-1, vocab_size), target_flat)
        loss_list.append(lossi.item())

        model.zero_grad()
        lossi.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()

        top_ids = torch.topk(decoder_outputs, 1, dim=2)[1].squeeze(-1)
        prev_generated_seq = mask_after_eos(top_ids)
    return loss_list
