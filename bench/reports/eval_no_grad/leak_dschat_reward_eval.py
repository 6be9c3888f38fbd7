# Source: https://github.com/microsoft/DeepSpeedExamples/blob/master/applications/DeepSpeed-Chat/training/step2_reward_model_finetuning/main.py
# Report: RLHF step 2 (reward model) evaluation, one edit away from the repo: the torch.no_grad() around the reward-model forward is dropped
# Shape: eval forward (model.eval(), no backward) builds a full graph; the scores read from the output dict are summed into chosen_scores/rejected_scores bound before the loop, and .float() keeps the graph, so every eval batch's activations stay alive until the function returns
# Expect: TML003 line 22; TML001 lines 28, 29
import torch


def to_device(batch, device):
    return {k: v.to(device) for k, v in batch.items()}


def train_reward_model(rm_model, train_dataloader, eval_dataloader, device, num_epochs, eval_iters, eval_interval):

    def evaluation_reward(model, dataloader, eval_iters):
        model.eval()
        correct_predictions = 0
        total_predictions = 0
        chosen_scores = 0.
        rejected_scores = 0.
        for _step, _batch in enumerate(dataloader):
            _batch = to_device(_batch, device)
            _outputs = model(**_batch)  # expect: TML003

            chosen = _outputs["chosen_mean_scores"]
            rejected = _outputs["rejected_mean_scores"]
            correct_predictions += (chosen > rejected).sum()
            total_predictions += chosen.shape[0]
            chosen_scores += _outputs["chosen_mean_scores"].mean().float()  # expect: TML001
            rejected_scores += _outputs["rejected_mean_scores"].mean().float()  # expect: TML001
            if (_step + 1) == eval_iters:
                break
        model.train()
        acc = (correct_predictions / total_predictions).item()
        chosen_scores = (chosen_scores / (_step + 1)).item()
        rejected_scores = (rejected_scores / (_step + 1)).item()
        return chosen_scores, rejected_scores, acc

    total_micro_steps = 0
    for epoch in range(num_epochs):
        rm_model.train()
        mean_loss = 0
        for step, batch in enumerate(train_dataloader):
            batch = to_device(batch, device)
            outputs = rm_model(**batch, use_cache=False)
            loss = outputs["loss"]
            rm_model.backward(loss)     # DeepSpeed engine: backward + step also zero the grads
            rm_model.step()
            mean_loss += loss.item()
            total_micro_steps += 1
            if eval_interval and total_micro_steps % eval_interval == 0:
                c, r, acc = evaluation_reward(rm_model, eval_dataloader, eval_iters)
                print(f"step {total_micro_steps}: chosen {c:.3f} rejected {r:.3f} diff {c - r:.3f} acc {acc:.3f}")
        print(f"epoch {epoch + 1}: loss {mean_loss / (step + 1):.4f}")
        c, r, acc = evaluation_reward(rm_model, eval_dataloader, eval_iters)
        print(f"epoch {epoch + 1}: chosen {c:.3f} rejected {r:.3f} acc {acc:.3f}")
