# Source: https://github.com/ksw0306/FloWaveNet/blob/0265b6b163098ef74dd6e4230f8456d1cfaf9a0d/train.py
# Report: FloWaveNet's evaluate(model) runs the flow over the whole LJSpeech test loader with no grad-disabled context of its own; the repository relies on the caller wrapping the call in `with torch.no_grad():`
# Shape: variant in which the epoch loop calls evaluate(model) directly (the wrapper was dropped in a refactor): every test batch's forward saves the flow's activations for a backward that never comes (peak at every batch); the metrics themselves are already .item()
# Expect: TML003 line 51
import gc

import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(epoch, model, optimizer, scheduler, train_loader):
    global global_step
    epoch_loss = 0.0
    running_loss = [0., 0., 0.]
    model.train()
    display_step = 100
    for batch_idx, (x, c) in enumerate(train_loader):
        scheduler.step()
        global_step += 1
        x, c = x.to(device), c.to(device)
        optimizer.zero_grad()
        log_p, logdet = model(x, c)
        log_p, logdet = torch.mean(log_p), torch.mean(logdet)
        loss = -(log_p + logdet)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.)
        optimizer.step()
        running_loss[0] += loss.item() / display_step
        running_loss[1] += log_p.item() / display_step
        running_loss[2] += logdet.item() / display_step
        epoch_loss += loss.item()
        if (batch_idx + 1) % display_step == 0:
            print('Global Step : {}, [{}, {}] [Log pdf, Log p(z), Log Det] : {}'
                  .format(global_step, epoch, batch_idx + 1, np.array(running_loss)))
            running_loss = [0., 0., 0.]
        del x, c, log_p, logdet, loss
    gc.collect()
    return epoch_loss / len(train_loader)


def evaluate(model, test_loader):
    model.eval()
    running_loss = [0., 0., 0.]
    epoch_loss = 0.
    display_step = 100
    for batch_idx, (x, c) in enumerate(test_loader):
        x, c = x.to(device), c.to(device)
        log_p, logdet = model(x, c)  # expect: TML003
        log_p, logdet = torch.mean(log_p), torch.mean(logdet)
        loss = -(log_p + logdet)
        running_loss[0] += loss.item() / display_step
        running_loss[1] += log_p.item() / display_step
        running_loss[2] += logdet.item() / display_step
        epoch_loss += loss.item()
        if (batch_idx + 1) % display_step == 0:
            print('[{}] [Log pdf, Log p(z), Log Det] : {}'.format(batch_idx + 1, np.array(running_loss)))
            running_loss = [0., 0., 0.]
        del x, c, log_p, logdet, loss
    epoch_loss /= len(test_loader)
    print('Evaluation Loss : {:.4f}'.format(epoch_loss))
    return epoch_loss


def run(model, optimizer, scheduler, train_loader, test_loader, epochs, state):
    global global_step
    global_step = 0
    list_train_loss, list_loss = [], []
    for epoch in range(1, epochs + 1):
        training_epoch_loss = train(epoch, model, optimizer, scheduler, train_loader)
        test_epoch_loss = evaluate(model, test_loader)
        state['training_loss'] = training_epoch_loss
        state['eval_loss'] = test_epoch_loss
        list_train_loss.append(training_epoch_loss)
        list_loss.append(test_epoch_loss)
        gc.collect()
    return list_train_loss, list_loss
