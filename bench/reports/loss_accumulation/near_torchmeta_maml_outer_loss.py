# Source: https://github.com/tristandeleu/pytorch-meta/blob/673d83b27f520ff30c8442b7e535e68c3a199fb9/examples/maml/train.py
# Report: audited correct idiom: Torchmeta's MAML example sums the per-task query losses into outer_loss (a tensor re-created every meta-batch), backpropagates it once, and only ever reads accuracy.item() for the progress bar
# Shape: same loop with the epoch-level running meta-loss taken as outer_loss.item(); the per-task `outer_loss += F.cross_entropy(...)` is intended gradient accumulation (re-created each meta-batch, backpropagated once) and accuracy is summed under no_grad
# Expect: near-miss: must be silent
import os

import torch
import torch.nn.functional as F
from tqdm import tqdm

from torchmeta.datasets.helpers import omniglot
from torchmeta.utils.data import BatchMetaDataLoader

from model import ConvolutionalNeuralNetwork
from utils import get_accuracy, update_parameters


def train(args):
    dataset = omniglot(args.folder, shots=args.num_shots, ways=args.num_ways,
                       shuffle=True, test_shots=15, meta_train=True, download=args.download)
    dataloader = BatchMetaDataLoader(dataset, batch_size=args.batch_size,
                                     shuffle=True, num_workers=args.num_workers)

    model = ConvolutionalNeuralNetwork(1, args.num_ways, hidden_size=args.hidden_size)
    model.to(device=args.device)
    model.train()
    meta_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    running_meta_loss = 0.0
    with tqdm(dataloader, total=args.num_batches) as pbar:
        for batch_idx, batch in enumerate(pbar):
            model.zero_grad()

            train_inputs, train_targets = batch["train"]
            train_inputs = train_inputs.to(device=args.device)
            train_targets = train_targets.to(device=args.device)
            test_inputs, test_targets = batch["test"]
            test_inputs = test_inputs.to(device=args.device)
            test_targets = test_targets.to(device=args.device)

            outer_loss = torch.tensor(0.0, device=args.device)
            accuracy = torch.tensor(0.0, device=args.device)
            for train_input, train_target, test_input, test_target in zip(
                    train_inputs, train_targets, test_inputs, test_targets):
                train_logit = model(train_input)
                inner_loss = F.cross_entropy(train_logit, train_target)

                model.zero_grad()
                params = update_parameters(model, inner_loss, step_size=args.step_size,
                                           first_order=args.first_order)

                test_logit = model(test_input, params=params)
                outer_loss += F.cross_entropy(test_logit, test_target)

                with torch.no_grad():
                    accuracy += get_accuracy(test_logit, test_target)

            outer_loss.div_(args.batch_size)
            accuracy.div_(args.batch_size)

            outer_loss.backward()
            meta_optimizer.step()

            running_meta_loss += outer_loss.item()
            pbar.set_postfix(accuracy="{0:.4f}".format(accuracy.item()),
                             loss="{0:.4f}".format(running_meta_loss / (batch_idx + 1)))
            if batch_idx >= args.num_batches:
                break

    if args.output_folder is not None:
        filename = os.path.join(args.output_folder, "maml_omniglot_"
                                "{0}shot_{1}way.pt".format(args.num_shots, args.num_ways))
        with open(filename, "wb") as f:
            torch.save(model.state_dict(), f)
