# Source: https://github.com/HalmosiL/TransferTest-Cifar/blob/3b1b775cfb9839e2096688cd8ec0254089fc5f72/adversarial.py
# Report: audit of real code: the PGD used to build transfer-attack batches re-leafs the adversarial batch every step (clone().detach().requires_grad_()); this is the variant it avoided, where the batch is rebuilt from its own graph-attached previous value
# Shape: attack helper keeps x_adv a non-leaf, takes the input gradient with autograd.grad and rebinds x_adv from itself each step, so every step's add/clamp nodes (and their saved batches) stay chained to the next
# Expect: TML005 line 26
import glob

import torch
import torch.nn as nn

from dataset import getTestset
from models import loadModel

MODELS_PATH = "./Models/*.pt"
DEVICE = "cuda:0"
BATCH_SIZE_TEST = 512
NUM_WORKERS_TEST = 4


def pgd(inputs, labels, model, epsilon=8 / 255, step_size=2 / 255, loss_fn=None, iterations=40):
    loss_fn = loss_fn or nn.CrossEntropyLoss()
    lower, upper = inputs - epsilon, inputs + epsilon
    x_adv = inputs.clone().requires_grad_(True)
    for _ in range(iterations):
        loss = loss_fn(model(x_adv), labels)
        (grad,) = torch.autograd.grad(loss, x_adv)
        x_adv = (x_adv + step_size * grad.sign()).clamp(lower, upper).clamp(0, 1)  # expect: TML005
    return x_adv


@torch.no_grad()
def accuracy(model, images, labels):
    predicted = model(images).argmax(dim=1)
    return (predicted == labels).float().mean().item()


def build_transfer_set():
    model_paths = sorted(glob.glob(MODELS_PATH))
    test_loader = getTestset(BATCH_SIZE_TEST, NUM_WORKERS_TEST, PIN_MEMORY=True)
    images, labels = next(iter(test_loader))
    images, labels = images.to(DEVICE), labels.to(DEVICE)
    saved = []
    for i, path in enumerate(model_paths):
        model = loadModel(path).to(DEVICE)
        model.eval()
        adversarial = pgd(images, labels, model)
        clean_acc = accuracy(model, images, labels)
        adv_acc = accuracy(model, adversarial, labels)
        print(f"model {i}: clean {clean_acc:.3f} adversarial {adv_acc:.3f}")
        out_path = f"./DataStore/image_{i}.pt"
        torch.save(adversarial.detach().cpu(), out_path)
        saved.append(out_path)
    torch.save(labels.cpu(), "./DataStore/labels.pt")
    return saved


if __name__ == "__main__":
    build_transfer_set()
