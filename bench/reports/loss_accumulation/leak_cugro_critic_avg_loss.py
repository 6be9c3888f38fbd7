# Source: https://github.com/NJU-RL/CuGRO/blob/f3f09a4ac96e4e52a92cea946c98813480740af1/critic.py
# Report: audited bug: train_critic adds the graph-attached critic loss (after backward) into avg_loss every batch and only calls .item() at epoch end
# Shape: the loss comes back from a helper (critic_td_loss) plus a distillation term; the running sum is a tensor chaining every batch's loss for the whole epoch
# Expect: TML001 line 52
from copy import deepcopy

import torch
import torch.nn as nn
from tqdm import trange


def critic_td_loss(score_model, condition, x):
    q = score_model.calculateQ(condition, x[:, 1:])
    return torch.mean((q - x[:, :1]) ** 2)


def distill_loss(score_model, old_q_net, states_list, actions_list, task, batch, device):
    old_states, old_actions, old_q = [], [], []
    for i in range(1, task):
        old_q_net.head_idx = i - 1
        idx = torch.randint(0, states_list[i - 1].shape[0], (batch,))
        s = torch.as_tensor(states_list[i - 1][idx], dtype=torch.float32, device=device)
        a = torch.as_tensor(actions_list[i - 1][idx], dtype=torch.float32, device=device)
        old_states.append(s)
        old_actions.append(a)
        old_q.append(old_q_net(s, a))
    new_q = score_model.calculateQ_new(old_states, old_actions, task)
    return sum(nn.functional.mse_loss(n, o) for n, o in zip(new_q, old_q))


def train_critic(args, score_model, data_loader, states_list, actions_list, optimizer):
    n_epochs = args.K * 100
    old_q_net = deepcopy(score_model.q[0])
    loss_list = []
    tqdm_epoch = trange(0, n_epochs)
    for epoch in tqdm_epoch:
        avg_loss = 0.0
        num_items = 0
        for x, condition, _ in data_loader:
            x = x.to(args.device)
            condition = condition.to(args.device)
            loss = critic_td_loss(score_model, condition, x)
            if args.task >= 2:
                loss = loss + args.l * distill_loss(
                    score_model, old_q_net, states_list, actions_list,
                    args.task, condition.shape[0], args.device,
                )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            score_model.condition = None
            avg_loss += loss * x.shape[0]  # expect: TML001
            num_items += x.shape[0]
        avg_loss = avg_loss.item() / num_items
        tqdm_epoch.set_description("Average Loss: {:5f}".format(avg_loss))
        if args.writer:
            args.writer.add_scalar("critic/loss", avg_loss, global_step=epoch)
        loss_list.append(avg_loss)
    return loss_list
