# Source: https://github.com/sailerml/RLHF_GLM/blob/492236ac6eb1967197988e4209cbce1ff38367dd/train_reward_model.py
# Report: ERNIE/BERT rank-list reward model training with a home-made matplotlib logger (iSummaryWriter.add_scalar appends every value to self.params_dict lists); the repo logs float(loss.cpu().detach()) averages
# Shape: the step loss tensor itself is handed to writer.add_scalar, whose body (same module) appends it to a per-parameter list that lives for the whole run
# Expect: TML001 line 62
import os
import time

import matplotlib.pyplot as plt
import torch

from model import compute_rank_list_loss


class iSummaryWriter(object):
    def __init__(self, log_path, log_name, extention=".png"):
        self.log_path = log_path
        os.makedirs(log_path, exist_ok=True)
        self.log_name = log_name
        self.extention = extention
        self.params_dict = {}

    def add_scalar(self, param, value, epoch):
        if param not in self.params_dict:
            self.params_dict[param] = {"values": [], "epochs": []}
        self.params_dict[param]["values"].append(value)
        self.params_dict[param]["epochs"].append(epoch)

    def record(self, dpi=200):
        for param, elems in self.params_dict.items():
            plt.plot(elems["epochs"], [float(v) for v in elems["values"]], color="darkorange")
        plt.savefig(os.path.join(self.log_path, self.log_name + self.extention), dpi=dpi)


def score_batch(model, batch, device):
    batch_rank_rewards = []
    for batch_idx in range(len(batch["input_ids"])):
        rank_rewards = []
        for text_idx in range(len(batch["input_ids"][batch_idx])):
            reward = model(
                batch["input_ids"][batch_idx][text_idx].unsqueeze(dim=0).to(device),
                batch["token_type_ids"][batch_idx][text_idx].unsqueeze(dim=0).to(device),
                batch["attention_mask"][batch_idx][text_idx].unsqueeze(dim=0).to(device),
                batch["position_ids"][batch_idx][text_idx].unsqueeze(dim=0).to(device),
            )
            rank_rewards.append(reward[0])
        batch_rank_rewards.append(rank_rewards)
    return batch_rank_rewards


def train(model, train_dataloader, optimizer, lr_scheduler, args):
    writer = iSummaryWriter(log_path=args.img_log_dir, log_name=args.img_log_name)
    tic_train = time.time()
    global_step = 0
    for epoch in range(1, args.num_train_epochs + 1):
        for batch in train_dataloader:
            batch_rank_rewards = score_batch(model, batch, args.device)
            loss = compute_rank_list_loss(batch_rank_rewards, device=args.device)
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            writer.add_scalar("train/train_loss", loss, global_step)  # expect: TML001

            global_step += 1
            if global_step % args.logging_steps == 0:
                time_diff = time.time() - tic_train
                print("global step %d, epoch: %d, speed: %.2f step/s"
                      % (global_step, epoch, args.logging_steps / time_diff))
                writer.record()
                tic_train = time.time()
