# Source: https://github.com/HalmosiL/TransferTest-Cifar/blob/3b1b775cfb9839e2096688cd8ec0254089fc5f72/adversarial.py
# Report: audit of real code: the PGD used to build transfer-attack batches re-leafs the adversarial batch every step with clone().detach().requires_grad_(), so no step's graph outlives it
# Shape: the step helper still rebinds adv_inputs from itself, but the very next line cuts it off with clone().detach().requires_grad_(True), and the projection ends in .detach() as the repository does
# Expect: near-miss: must be silent
import glob

import torch
import torch.nn as nn

from dataset import getTestset
from models import loadModel

MODELS_PATH = "./Models/*.pt"
DEVICE = "cuda:0"
BATCH_SIZE_TEST = 512
NUM_WORKERS_TEST = 4


def sign_step(image, step_size, data_grad):
    return image + step_size * data_grad.sign()


def pgd(inputs, labels, model, epsilon=8 / 255, step_size=2 / 255, loss_fn=None, iterations=40):
    loss_fn = loss_fn or nn.CrossEntropyLoss()
    adv_inputs = inputs.clone().detach().requires_grad_(True)
    loss_fn(model(adv_inputs), labels).backward()
    data_grad = adv_inputs.grad.detach()
    for _ in range(iterations):
        adv_inputs = sign_step(adv_inputs, step_size, data_grad)
        adv_inputs = adv_inputs.clone().detach().requires_grad_(True)
        loss = loss_fn(model(adv_inputs), labels)
        loss.backward()
        data_grad = adv_inputs.grad.detach()
        eta = torch.clamp(adv_inputs - inputs, min=-epsilon, max=epsilon)
        adv_inputs = torch.clamp(inputs + eta, min=0, max=1).detach().requires_grad_(True)
    model.zero_grad(set_to_none=True)
    return adv_inputs.detach()


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
        torch.save(adversarial.cpu(), out_path)
        saved.append(out_path)
    torch.save(labels.cpu(), "./DataStore/labels.pt")
    return saved


if __name__ == "__main__":
    build_transfer_set()
