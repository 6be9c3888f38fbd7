# Source: https://github.com/HarderThenHarder/transformers_tasks/blob/56edf9cbcb6629a47e9f86b7285dc205f6725888/RLHF/train_reward_model.py
# Report: issue #13: evaluate_model reset batch_rank_rewards inside the dev loop, so accuracy only saw the last batch; the fix moved the list above the loop, and it now collects every dev-set reward tensor (still on cuda:0) before ranking them (source note: fix for https://github.com/HarderThenHarder/transformers_tasks/issues/13)
# Shape: RLHF rank-list reward model (ERNIE/BERT scorer); under no_grad each reward[0] stays a GPU tensor and the per-sample lists pile up in batch_rank_rewards for the whole dev set
# Expect: TML004 line 24
import time

import torch

from model import RewardModel, compute_rank_list_loss  # noqa: F401  (as in the original script)


def evaluate_model(model, data_loader, device="cuda:0"):
    model.eval()
    with torch.no_grad():
        batch_rank_rewards = []
        for batch in data_loader:
            for batch_idx in range(len(batch["input_ids"])):
                rank_rewards = []
                for text_idx in range(len(batch["input_ids"][batch_idx])):
                    inputs = [batch[k][batch_idx][text_idx].unsqueeze(dim=0).to(device)
                              for k in ("input_ids", "token_type_ids", "attention_mask", "position_ids")]
                    reward = model(*inputs)
                    rank_rewards.append(reward[0])
                batch_rank_rewards.append(rank_rewards)  # expect: TML004
    model.train()
    total_ranklist, right_ranklist = 0, 0
    for rank_rewards in batch_rank_rewards:
        rank_rewards = [t.cpu().float() for t in rank_rewards]
        if sorted(rank_rewards, reverse=True) == rank_rewards:
            right_ranklist += 1
        total_ranklist += 1
    return right_ranklist / total_ranklist


def train(model, optimizer, lr_scheduler, train_dataloader, eval_dataloader, epochs, valid_steps, device="cuda:0"):
    loss_list, global_step, best_acc = [], 0, 0.0
    tic_train = time.time()
    for epoch in range(1, epochs + 1):
        for batch in train_dataloader:
            batch_rank_rewards = []
            for batch_idx in range(len(batch["input_ids"])):
                rank_rewards = []
                for text_idx in range(len(batch["input_ids"][batch_idx])):
                    inputs = [batch[k][batch_idx][text_idx].unsqueeze(dim=0).to(device)
                              for k in ("input_ids", "token_type_ids", "attention_mask", "position_ids")]
                    rank_rewards.append(model(*inputs)[0])
                batch_rank_rewards.append(rank_rewards)
            loss = compute_rank_list_loss(batch_rank_rewards, device=device)
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            loss_list.append(float(loss.cpu().detach()))
            global_step += 1
            if global_step % valid_steps == 0:
                acc = evaluate_model(model, eval_dataloader, device)
                print("global step %d, epoch %d, loss %.5f, eval acc %.5f, %.1fs" % (
                    global_step, epoch, sum(loss_list) / len(loss_list), acc, time.time() - tic_train))
                best_acc = max(best_acc, acc)
    return best_acc
