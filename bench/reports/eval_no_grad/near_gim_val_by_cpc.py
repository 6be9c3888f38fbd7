# Source: https://github.com/loeweX/Greedy_InfoMax/blob/05f35c8e43a566ac97a3808f4cffd4868086514d/GreedyInfoMax/audio/validation/val_by_CPC.py
# Report: audited repository code: the audio CPC/GIM validation pass (called once per epoch from main_audio.train) runs the full model over the LibriSpeech test loader with autograd enabled (no torch.no_grad), so every test batch builds and saves the activations of all encoder modules although no backward follows
# Shape: near-miss: the same validation helper and greedy training loop with the forward of the validation pass wrapped in torch.no_grad() (the fix); the training loop's retain_graph=True on all but the last module's backward stays as in the original
# Expect: near-miss: must be silent
import time

import numpy as np
import torch


def val_by_CPC(opt, model, test_loader):
    total_step = len(test_loader)

    model.eval()
    loss_epoch = np.zeros(opt.model_splits)
    starttime = time.time()

    for step, (audio, _, _, _) in enumerate(test_loader):
        model_input = audio.to(opt.device)

        with torch.no_grad():
            loss = model(model_input)
        loss = torch.mean(loss, 0)  # average over the losses from different GPUs

        loss_epoch += loss.data.cpu().numpy()

    for i in range(opt.model_splits):
        print(
            "Validation Loss Model {}: Time (s): {:.1f} --- {:.4f}".format(
                i, time.time() - starttime, loss_epoch[i] / total_step
            )
        )

    model.train()
    return [x / total_step for x in loss_epoch]


def train(opt, model, optimizer, train_loader, test_loader, logs):
    for epoch in range(opt.start_epoch, opt.num_epochs + opt.start_epoch):
        loss_epoch = [0.0 for _ in range(opt.model_splits)]

        for step, (audio, filename, _, start_idx) in enumerate(train_loader):
            model_input = audio.to(opt.device)
            loss = model(model_input, filename, start_idx, n=opt.train_layer)
            loss = torch.mean(loss, 0)

            # greedy training: every module has its own optimizer
            for idx, cur_losses in enumerate(loss):
                model.zero_grad()
                if idx == len(loss) - 1:
                    cur_losses.backward()
                else:
                    cur_losses.backward(retain_graph=True)
                optimizer[idx].step()
                loss_epoch[idx] += cur_losses.item()

        logs.append_train_loss([x / len(train_loader) for x in loss_epoch])

        if opt.validate:
            validation_loss = val_by_CPC(opt, model, test_loader)
            logs.append_val_loss(validation_loss)
