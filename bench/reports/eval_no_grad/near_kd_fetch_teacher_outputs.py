# Source: https://github.com/haitongli/knowledge-distillation-pytorch/blob/002b7ab6c425afd89839cb4648a5480199679231/train.py
# Report: audit of a CIFAR knowledge-distillation trainer whose fetch_teacher_outputs runs the teacher CNN over the training set in eval mode with autograd on; rewritten as the fix, the caching pass under torch.no_grad()
# Shape: same helper and cache of numpy teacher logits, the loop wrapped in torch.no_grad(); the student loop (forward, KD loss, backward) stays outside any grad-disabled context as it must
# Expect: near-miss: must be silent
import logging

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm


class RunningAverage:
    def __init__(self):
        self.steps, self.total = 0, 0.0

    def update(self, val):
        self.total += val
        self.steps += 1

    def __call__(self):
        return self.total / max(self.steps, 1)


def loss_fn_kd(outputs, labels, teacher_outputs, alpha, temperature):
    soft = F.kl_div(F.log_softmax(outputs / temperature, dim=1),
                    F.softmax(teacher_outputs / temperature, dim=1), reduction="batchmean")
    return soft * (alpha * temperature * temperature) + F.cross_entropy(outputs, labels) * (1.0 - alpha)


def fetch_teacher_outputs(teacher_model, dataloader, device):
    teacher_model.eval()
    teacher_outputs = []
    with torch.no_grad():
        for data_batch, _labels in dataloader:
            data_batch = data_batch.to(device, non_blocking=True)
            output_teacher_batch = teacher_model(data_batch).cpu().numpy()
            teacher_outputs.append(output_teacher_batch)
    return teacher_outputs


def train_kd(model, teacher_outputs, optimizer, dataloader, params, device):
    model.train()
    loss_avg = RunningAverage()
    with tqdm(total=len(dataloader)) as t:
        for i, (train_batch, labels_batch) in enumerate(dataloader):
            train_batch = train_batch.to(device, non_blocking=True)
            labels_batch = labels_batch.to(device, non_blocking=True)
            output_batch = model(train_batch)
            output_teacher_batch = torch.from_numpy(teacher_outputs[i]).to(device)
            loss = loss_fn_kd(output_batch, labels_batch, output_teacher_batch,
                              params["alpha"], params["temperature"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_avg.update(loss.item())
            t.set_postfix(loss=f"{loss_avg():05.3f}")
            t.update()
    return loss_avg()


def train_and_evaluate_kd(model, teacher_model, train_dl, optimizer, params, device="cuda"):
    # the train loader must not shuffle: cached teacher outputs are looked up by batch index
    teacher_outputs = fetch_teacher_outputs(teacher_model, train_dl, device)
    logging.info("cached %d teacher batches (%.1f MB)", len(teacher_outputs),
                 sum(o.nbytes for o in teacher_outputs) / 2**20)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100, gamma=0.2)
    history = []
    for epoch in range(params["num_epochs"]):
        history.append(train_kd(model, teacher_outputs, optimizer, train_dl, params, device))
        scheduler.step()
        logging.info("epoch %d/%d kd loss %.4f", epoch + 1, params["num_epochs"], history[-1])
    return np.asarray(history)
