# Source: https://discuss.pytorch.org/t/gpu-cached-memory-increase-when-training-different-models-in-a-loop/48998
# Report: Training several models one after another from an all_models dict made GPU memory grow when the second model started; the poster found the trained model objects had to be deleted before training the next one.
# Shape: one model+optimizer per config is built in a loop and stored in all_models; each is moved to the GPU in place and trained, and the dict keeps every trained model and its optimizer state on the GPU until the end (TML004 placed on the line that stores them).
# Expect: TML004 line 23
import torch
import torch.nn as nn
import torchvision


def build_models(configs, datasets):
    all_models = {}
    for name, cfg in configs.items():
        model = torchvision.models.resnet18(num_classes=cfg["num_classes"])
        optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr_array"][0], momentum=0.9)
        loader = torch.utils.data.DataLoader(datasets[name], batch_size=64, shuffle=True)
        entry = {
            "model": model,
            "optimizer": optimizer,
            "train_loader": loader,
            "criterion": nn.BCEWithLogitsLoss(),
            "lr_array": cfg["lr_array"],
        }
        all_models[name] = entry  # expect: TML004
    return all_models


def train_all(all_models, device):
    for model_name, training_obj in all_models.items():
        print("-------- Training model: " + model_name + " --------")
        optimizer = training_obj["optimizer"]
        criterion = training_obj["criterion"]
        model = training_obj["model"]
        model.to(device)
        model.train()
        for epoch, lr in enumerate(training_obj["lr_array"]):
            for group in optimizer.param_groups:
                group["lr"] = lr
            torch.cuda.empty_cache()
            for images, labels in training_obj["train_loader"]:
                images, labels = images.to(device), labels.to(device).float()
                outputs = model(images).squeeze()
                optimizer.zero_grad()
                loss = criterion(outputs, labels)
                loss.backward()
                optimizer.step()
