# Source: https://github.com/sailerml/RLHF_GLM/blob/492236ac6eb1967197988e4209cbce1ff38367dd/train_reward_model.py
# Report: reward-model dev evaluation (rank-list accuracy): under torch.no_grad every text's reward[0] is appended as a CUDA tensor into lists that are kept for the whole dev set, and moved to the CPU only after the loop
# Shape: same as the repo: no graph (no_grad), but each scored text leaves a device tensor in rank_rewards, which is stored in batch_rank_rewards until the metric is computed
# Expect: TML004 line 31
import torch

args = None


def to_dev(batch, key, batch_idx, text_idx):
    return batch[key][batch_idx][text_idx].unsqueeze(dim=0).to(args.device)


def evaluate_model(model, data_loader):
    """Rank-list accuracy of the reward model on the dev set."""
    model.eval()
    with torch.no_grad():
        batch_rank_rewards = []
        for batch in data_loader:
            for batch_idx in range(len(batch["input_ids"])):
                rank_texts_count = len(batch["input_ids"][batch_idx])
                rank_rewards = []
                for text_idx in range(rank_texts_count):
                    reward = model(
                        to_dev(batch, "input_ids", batch_idx, text_idx),
                        to_dev(batch, "token_type_ids", batch_idx, text_idx),
                        to_dev(batch, "attention_mask", batch_idx, text_idx),
                        to_dev(batch, "position_ids", batch_idx, text_idx),
                    )
                    # (rank_text_num) -> [tensor([0.17], device='cuda:0'), ...]
                    rank_rewards.append(reward[0])  # expect: TML004
                batch_rank_rewards.append(rank_rewards)
    model.train()
    total_ranklist, right_ranklist = 0, 0
    for rank_rewards in batch_rank_rewards:
        rank_rewards = [t.cpu().float() for t in rank_rewards]
        rank_rewards_sorted = sorted(rank_rewards, reverse=True)
        total_ranklist += 1
        if rank_rewards_sorted == rank_rewards:
            right_ranklist += 1
    return right_ranklist / total_ranklist


def eval_and_log(model, eval_dataloader, writer, global_step):
    acc = evaluate_model(model, eval_dataloader)
    writer.add_scalar("eval/accuracy", acc, global_step)
    writer.record()
    print("Evaluation acc: %.5f" % acc)
    return acc
