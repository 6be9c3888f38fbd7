# Source: https://github.com/pemami4911/neural-combinatorial-rl-pytorch/blob/fc20970dda459891715b584a2a45fb9c9bdc7b8c/trainer.py
# Report: variant of the pointer-network REINFORCE trainer: the exponential-moving-average baseline is detached after every step as in the repo, but the progress display keeps a second moving average, of the actor loss itself, built from the attached loss tensor, so each step's loss graph is linked into the next one for the whole run
# Shape: module-level train loop over epochs/batches; model(bat) returns R, probs, actions, idxs; critic_exp_mvg_avg is an EMA of R.mean() detached after the optimizer step; smoothed_loss = beta * smoothed_loss + (1 - beta) * actor_loss is rebound every batch and shown on the tqdm bar
# Expect: TML005 line 50
import torch
import torch.optim as optim
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader
from tqdm import tqdm


def train_tsp(model, training_dataset, val_dataset, args):
    actor_optim = optim.Adam(model.actor_net.parameters(), lr=float(args['actor_net_lr']))
    decay = int(args['actor_lr_decay_step'])
    actor_scheduler = lr_scheduler.MultiStepLR(
        actor_optim, range(decay, decay * 1000, decay), gamma=float(args['actor_lr_decay_rate']))
    training_dataloader = DataLoader(training_dataset, batch_size=int(args['batch_size']), shuffle=True, num_workers=4)
    validation_dataloader = DataLoader(val_dataset, batch_size=1, shuffle=True, num_workers=1)

    beta = args['critic_beta']
    critic_exp_mvg_avg = torch.zeros(1).cuda()
    smoothed_loss = 0.0
    model = model.cuda()
    for epoch in range(int(args['n_epochs'])):
        model.train()
        bar = tqdm(training_dataloader)
        for batch_id, sample_batch in enumerate(bar):
            bat = sample_batch.cuda()
            R, probs, actions, actions_idxs = model(bat)
            if batch_id == 0:
                critic_exp_mvg_avg = R.mean()
            else:
                critic_exp_mvg_avg = (critic_exp_mvg_avg * beta) + ((1. - beta) * R.mean())
            advantage = R - critic_exp_mvg_avg

            logprobs = 0
            for prob in probs:
                logprobs += torch.log(prob)
            logprobs[(logprobs < -1000).detach()] = 0.
            actor_loss = (advantage * logprobs).mean()

            actor_optim.zero_grad()
            actor_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.actor_net.parameters(), float(args['max_grad_norm']))
            actor_optim.step()
            actor_scheduler.step()
            critic_exp_mvg_avg = critic_exp_mvg_avg.detach()

            # smoothed loss for the progress bar
            smoothed_loss = beta * smoothed_loss + (1. - beta) * actor_loss  # expect: TML005
            bar.set_postfix(loss=float(smoothed_loss), reward=R.mean().item())

        model.eval()
        avg_reward = []
        with torch.no_grad():
            for val_batch in validation_dataloader:
                R, _, _, _ = model(val_batch.cuda())
                avg_reward.append(R[0].item())
        print('epoch {}: val avg reward {:.4f}'.format(epoch, sum(avg_reward) / len(avg_reward)))
    return model
