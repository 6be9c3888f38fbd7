# Source: https://github.com/lizbaka/BreakHis-exp/blob/19bdee046fa3401db4c57891e134e2e6c50404cd/test.py
# Report: (fixed variant) the same BreakHis do_test() collecting per-batch predictions, labels and logits as CPU tensors in lists and concatenating each list once after the loop
# Shape: a test helper that optionally restores a checkpoint dict, keeps the mean loss as a float, and returns (loss, labels, preds, logits); the forward is under no_grad and only .cpu() copies outlive a batch
# Expect: near-miss: must be silent
import torch
from sklearn.metrics import classification_report
from tqdm import tqdm

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def load_weights(model, ckpt_path):
    ckpt = torch.load(ckpt_path, map_location=device)
    model.load_state_dict(ckpt["model_state_dict"])


def do_test(model, test_loader, ckpt_path=None, loss_criterion=None):
    if ckpt_path:
        load_weights(model, ckpt_path)
    model.to(device)

    batch_count = 0
    loss = 0.0
    pred_chunks, label_chunks, output_chunks = [], [], []
    model.eval()
    with torch.no_grad():
        for images, labels in tqdm(test_loader):
            images, labels = images.to(device), labels.to(device)
            outputs = model(images)
            if loss_criterion:
                loss += loss_criterion(outputs, labels).item()
                batch_count += 1
            pred = outputs.argmax(dim=1)
            pred_chunks.append(pred.cpu())
            label_chunks.append(labels.cpu())
            output_chunks.append(outputs.cpu())
    pred_all = torch.cat(pred_chunks, dim=0)
    label_all = torch.cat(label_chunks, dim=0)
    output_all = torch.cat(output_chunks, dim=0)
    if loss_criterion and batch_count > 0:
        loss /= batch_count
    return loss, label_all, pred_all, output_all


def report(model, test_loader, class_names, ckpt_path=None):
    criterion = torch.nn.CrossEntropyLoss()
    loss, labels, preds, logits = do_test(model, test_loader, ckpt_path, criterion)
    probs = torch.softmax(logits, dim=1)
    print(f"test loss {loss:.4f}")
    print(classification_report(labels.long().tolist(), preds.long().tolist(), target_names=class_names))
    return probs
