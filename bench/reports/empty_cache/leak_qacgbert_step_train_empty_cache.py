# Source: https://github.com/frankaging/Quasi-Attention-ABSA/blob/06f36838ca13682a958692214dc2fa4f68051b1e/code/util/train_helper.py
# Report: audited: the QACGBERT aspect-sentiment fine-tuning loop (step_train) and its evaluate loop call torch.cuda.empty_cache() on every batch; nothing live is freed, each call synchronises and hands cached blocks back so the next forward pays cudaMalloc again
# Shape: same step_train/evaluate layout (truncate batch to max_seq_lens, move to device, gradient accumulation, tr_loss += loss.item(), eval interval); the empty_cache calls stay inside both per-batch loops
# Expect: TML009 line 26; TML009 line 47
import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm


def _to_device(batch, device):
    input_ids, input_mask, segment_ids, label_ids, seq_lens, context_ids = batch
    max_seq_lens = max(seq_lens)[0]
    input_ids = input_ids[:, :max_seq_lens].to(device)
    input_mask = input_mask[:, :max_seq_lens].to(device)
    segment_ids = segment_ids[:, :max_seq_lens].to(device)
    return input_ids, input_mask, segment_ids, label_ids.to(device), seq_lens.to(device), context_ids.to(device)


def evaluate(test_dataloader, model, device, args):
    model.eval()
    test_loss, nb_test_steps = 0, 0
    y_true, y_pred, score = [], [], []
    with torch.no_grad():
        for _, batch in enumerate(tqdm(test_dataloader, desc="Iteration")):
            torch.cuda.empty_cache()  # expect: TML009
            input_ids, input_mask, segment_ids, label_ids, seq_lens, context_ids = _to_device(batch, device)
            tmp_test_loss, logits, _, _, _, _ = model(
                input_ids, segment_ids, input_mask, seq_lens,
                device=device, labels=label_ids, context_ids=context_ids)
            probs = F.softmax(logits, dim=-1).cpu().numpy()
            y_true.append(label_ids.cpu().numpy())
            y_pred.append(np.argmax(probs, axis=1))
            score.append(probs)
            test_loss += tmp_test_loss.mean().item()
            nb_test_steps += 1
    return test_loss / nb_test_steps, np.concatenate(y_true), np.concatenate(y_pred), np.concatenate(score)


def step_train(train_dataloader, test_dataloader, model, optimizer, device, n_gpu,
               evaluate_interval, global_step, args):
    tr_loss = 0
    nb_tr_steps = 0
    pbar = tqdm(train_dataloader, desc="Iteration")
    for step, batch in enumerate(pbar):
        model.train()
        torch.cuda.empty_cache()  # expect: TML009
        input_ids, input_mask, segment_ids, label_ids, seq_lens, context_ids = _to_device(batch, device)
        loss, _, _, _, _, _ = model(input_ids, segment_ids, input_mask, seq_lens,
                                    device=device, labels=label_ids, context_ids=context_ids)
        if n_gpu > 1:
            loss = loss.mean()
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps
        loss.backward()
        tr_loss += loss.item()
        nb_tr_steps += 1
        if (step + 1) % args.gradient_accumulation_steps == 0:
            optimizer.step()
            model.zero_grad()
            global_step += 1
        pbar.set_postfix({"train_loss": loss.tolist()})
        if global_step % evaluate_interval == 0:
            test_loss, y_true, y_pred, score = evaluate(test_dataloader, model, device, args)
            print(global_step, tr_loss / nb_tr_steps, test_loss)
    return global_step
