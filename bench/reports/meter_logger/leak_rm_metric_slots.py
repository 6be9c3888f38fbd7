# Source: https://github.com/allenai/open-instruct/pull/363
# Report: open-instruct reward_modeling.py wrote each step's loss / rewards into preallocated per-accumulation-step metric tensors outside no_grad; memory climbed through training until the PR wrapped the block in torch.no_grad()
# Shape: losses / chosen_rewards / ... are device tensors created before the loop; `slot[idx] = loss` copies a graph-attached value in place, so each slot tensor gains a CopySlices node chained to the previous step's graph
# Expect: TML001 lines 56, 57, 58, 59
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, get_scheduler


def get_reward(model, query_responses, pad_token_id):
    attention_mask = query_responses != pad_token_id
    input_ids = torch.masked_fill(query_responses, ~attention_mask, 0)
    out = model(input_ids=input_ids, attention_mask=attention_mask)
    last = attention_mask.sum(dim=1) - 1
    scores = out.logits.squeeze(-1)
    return scores[torch.arange(scores.size(0), device=scores.device), last]


def train_reward_model(args, train_dataset, collator, tokenizer, writer):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    device = accelerator.device
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0,
                              num_training_steps=args.num_training_steps)
    dataloader = DataLoader(train_dataset, batch_size=args.per_device_batch_size,
                            shuffle=True, collate_fn=collator)
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)

    n_slots = args.gradient_accumulation_steps
    losses = torch.zeros((n_slots,), device=device)
    chosen_rewards = torch.zeros((n_slots,), device=device)
    rejected_rewards = torch.zeros((n_slots,), device=device)
    reward_margin = torch.zeros((n_slots,), device=device)
    slot = 0
    training_step = 0
    episode = 0
    model.train()

    for _ in range(args.num_train_epochs):
        for data in dataloader:
            episode += args.micro_batch_size
            training_step += 1
            n_chosen = data["chosen_ids"].shape[0]
            query_responses = torch.cat((data["chosen_ids"], data["rejected_ids"]), dim=0)
            with accelerator.accumulate(model):
                predicted = get_reward(model, query_responses, tokenizer.pad_token_id)
                chosen_reward = predicted[:n_chosen]
                rejected_reward = predicted[n_chosen:]
                loss = -F.logsigmoid(chosen_reward - rejected_reward).mean()
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            losses[slot] = loss  # expect: TML001
            chosen_rewards[slot] = chosen_reward.mean()  # expect: TML001
            rejected_rewards[slot] = rejected_reward.mean()  # expect: TML001
            reward_margin[slot] = (chosen_reward - rejected_reward).mean()  # expect: TML001
            slot = (slot + 1) % n_slots
            if training_step % n_slots == 0:
                scheduler.step()
                with torch.no_grad():
                    local = torch.stack([losses.mean(), chosen_rewards.mean(),
                                         rejected_rewards.mean(), reward_margin.mean()])
                    global_metrics = accelerator.reduce(local, reduction="mean").tolist()
                if accelerator.is_main_process:
                    names = ["loss", "chosen_rewards", "rejected_rewards", "reward_margin"]
                    for name, value in zip(names, global_metrics):
                        writer.add_scalar(f"train/rm/{name}", value, episode)
    return model
