# Source: https://github.com/NVIDIA-AI-IOT/jetbot/pull/117
# Report: road_following training summed the per-batch mse_loss tensors into train_loss/test_loss; GPU memory grew within each epoch on a Jetson Nano until OOM (>400 images), fixed with float()
# Shape: epoch totals are built with `+= loss` on graph-attached losses; the test loop also runs the model after eval() without no_grad, so every test batch's graph is kept by test_loss
# Expect: TML001 line 32; TML001 line 44; TML003 line 42
import torch
import torch.nn.functional as F
import torchvision


def build_model(device):
    model = torchvision.models.resnet18(pretrained=True)
    model.fc = torch.nn.Linear(512, 2)
    return model.to(device)


def train_road_following(train_loader, test_loader, epochs=70,
                         best_path="best_steering_model_xy.pth"):
    device = torch.device("cuda")
    model = build_model(device)
    optimizer = torch.optim.Adam(model.parameters())
    best_loss = 1e9

    for epoch in range(epochs):
        model.train()
        train_loss = 0.0
        for images, labels in iter(train_loader):
            images = images.to(device)
            labels = labels.to(device)
            optimizer.zero_grad()
            outputs = model(images)
            loss = F.mse_loss(outputs, labels)
            train_loss += loss  # expect: TML001
            loss.backward()
            optimizer.step()
        train_loss /= len(train_loader)

        model.eval()
        test_loss = 0.0
        for images, labels in iter(test_loader):
            images = images.to(device)
            labels = labels.to(device)
            outputs = model(images)  # expect: TML003
            loss = F.mse_loss(outputs, labels)
            test_loss += loss  # expect: TML001
        test_loss /= len(test_loader)

        print("%f, %f" % (train_loss, test_loss))
        if test_loss < best_loss:
            torch.save(model.state_dict(), best_path)
            best_loss = test_loss
