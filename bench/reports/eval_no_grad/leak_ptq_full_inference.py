# Source: https://github.com/Jermmy/pytorch-quantization-demo/blob/10c06660019c87a68961a7aab39162b9aa28a710/post_training_quantize.py
# Report: audited code: the post-training-quantization script measures float and quantized MNIST accuracy by looping over the whole test loader after model.eval(), with autograd still recording every batch
# Shape: kept as in the original: full_inference() and quantize_inference() run the model over test_loader with grad enabled; only the argmax count (.item()) leaves the loop; the calibration pass in __main__ is put under no_grad here (not in the original) to keep the pair about the two accuracy loops
# Expect: TML003 line 21; TML003 line 30
import torch
from torchvision import datasets, transforms

from model import NetBN

MNIST_TF = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])


def make_loader(train, batch_size=64):
    ds = datasets.MNIST("data", train=train, download=train, transform=MNIST_TF)
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=train, num_workers=1, pin_memory=True)


def full_inference(model, test_loader):
    correct = 0
    for i, (data, target) in enumerate(test_loader, 1):
        output = model(data)  # expect: TML003
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
    print("\nTest set: Full Model Accuracy: {:.0f}%\n".format(100.0 * correct / len(test_loader.dataset)))


def quantize_inference(model, test_loader):
    correct = 0
    for i, (data, target) in enumerate(test_loader, 1):
        output = model.quantize_inference(data)  # expect: TML003
        pred = output.argmax(dim=1, keepdim=True)
        correct += pred.eq(target.view_as(pred)).sum().item()
    print("\nTest set: Quant Model Accuracy: {:.0f}%\n".format(100.0 * correct / len(test_loader.dataset)))


if __name__ == "__main__":
    train_loader = make_loader(train=True)
    test_loader = make_loader(train=False)

    model = NetBN()
    model.load_state_dict(torch.load("ckpt/mnist_cnnbn.pt", map_location="cpu"))
    model.eval()
    full_inference(model, test_loader)

    model.quantize(num_bits=8)
    model.eval()
    with torch.no_grad():
        for i, (data, _) in enumerate(train_loader, 1):
            model.quantize_forward(data)
            if i % 500 == 0:
                break
    torch.save(model.state_dict(), "ckpt/mnist_cnnbn_ptq.pt")
    model.freeze()
    quantize_inference(model, test_loader)
