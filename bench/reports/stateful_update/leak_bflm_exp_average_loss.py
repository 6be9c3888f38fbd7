# Source: https://github.com/cybertronai/bflm/issues/3
# Report: question about the smoothed training-loss line of the GPT-2 fine-tuning loop (exp_average_loss = 0.7*exp_average_loss + 0.3*loss.item()), kept only for the tqdm display
# Shape: the same smoothing written on the loss tensor itself (no .item()): the running average is loop-carried and each step's value links to the previous step's graph
# Expect: TML005 line 48
import argparse
import os

import torch
import tqdm
from tqdm import trange


def checkpoint(model, args):
    os.makedirs(args.output_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.output_dir, "pytorch_model.bin"))


def get_lr(optimizer):
    return optimizer.param_groups[0]["lr"]


def main(model, data_loader, optimizer, device):
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--output_dir", type=str, default="out")
    args = parser.parse_args()

    num_train_epochs = args.num_train_epochs
    nb_tr_steps, tr_loss, exp_average_loss = 0, 0, None
    model.train()
    try:
        for _ in trange(int(num_train_epochs), desc="Epoch"):
            tr_loss = 0
            nb_tr_steps = 0
            tqdm_bar = tqdm.tqdm(data_loader, desc="Training")
            for step, batch in enumerate(tqdm_bar):
                batch = batch.to(device)
                # if lm_labels is given, the model returns the LM loss
                loss = model(batch, lm_labels=batch)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                tr_loss += loss.item()
                if exp_average_loss is None:
                    exp_average_loss = loss.detach()
                else:
                    # smoothed loss for the progress bar
                    exp_average_loss = 0.7 * exp_average_loss + 0.3 * loss  # expect: TML005
                nb_tr_steps += 1
                tqdm_bar.desc = "Training loss: {:.2e} lr: {:.2e}".format(
                    float(exp_average_loss), get_lr(optimizer)
                )
    except KeyboardInterrupt:
        checkpoint(model, args)
    return tr_loss / max(nb_tr_steps, 1)
