# Source: https://github.com/facebookresearch/EGG/commit/8742562828bfeb097a2a8dd547606b64a8cb02d5
# Report: "debug memory leak" commit in EGG's imagenet_subsets.py: the per-epoch validation helper ran the model and summed raw losses with no grad-disabled context; the fix wrapped it in torch.no_grad()
# Shape: caller only does model.train(False); test_one_epoch forwards every val batch with grad on and folds each graph-attached vloss into running_vloss, which is returned as the epoch average
# Expect: TML003 line 48; TML001 line 52
import argparse
import sys

import timm
import torch
import torchvision


def build_vision_module(name: str = "resnet50", pretrained: bool = False):
    if name == "inception":
        return torchvision.models.inception_v3(pretrained=pretrained, aux_logits=True)
    if name == "vit":
        return timm.create_model("vit_base_patch16_384", pretrained=pretrained)
    return torchvision.models.resnet50(pretrained=pretrained)


def train_one_epoch(loader, model, optimizer, loss_fn, device="cuda", is_inception=False):
    running_loss = 0.0
    last_loss = 0.0
    for i, (inputs, labels, _) in enumerate(loader):
        inputs = inputs.to(device)
        labels = labels.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        if is_inception:
            outputs = outputs[1]
        loss = loss_fn(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 1000 == 999:
            last_loss = running_loss / 1000
            print("  batch {} loss: {}".format(i + 1, last_loss))
            running_loss = 0.0
    return last_loss


def test_one_epoch(validation_loader, model, loss_fn, device="cuda", is_inception=False):
    running_vloss = 0.0
    running_acc = 0.0
    for i, (vinputs, vlabels, _) in enumerate(validation_loader):
        vinputs = vinputs.to(device)
        vlabels = vlabels.to(device)
        voutputs = model(vinputs)  # expect: TML003
        if is_inception:
            voutputs = voutputs[1]
        vloss = loss_fn(voutputs, vlabels)
        running_vloss += vloss  # expect: TML001
        running_acc += (voutputs.argmax(1) == vlabels).sum().item() / vlabels.size(0)

    avg_vloss = running_vloss / (i + 1)
    avg_acc = running_acc / (i + 1)
    return avg_vloss, avg_acc


def main(get_dataloader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="vit")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--epochs", type=int, default=5)
    opts = parser.parse_args(sys.argv[1:])

    validation_loader, training_loader = get_dataloader(dataset_name="cifar100", batch_size=1, num_workers=4)
    model = build_vision_module(name=opts.model).to(opts.device)
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

    best_vloss = 1_000_000.0
    for epoch in range(opts.epochs):
        model.train(True)
        avg_loss = train_one_epoch(training_loader, model, optimizer, loss_fn, opts.device, opts.model == "inception")
        # no gradients needed for reporting
        model.train(False)
        avg_vloss, avg_acc = test_one_epoch(validation_loader, model, loss_fn, opts.device, opts.model == "inception")
        print("LOSS train {} valid {} v_acc {}".format(avg_loss, avg_vloss, avg_acc))
        if avg_vloss < best_vloss:
            best_vloss = avg_vloss
            torch.save(model.state_dict(), "model_{}.pt".format(epoch))
