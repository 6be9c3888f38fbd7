# Source: https://github.com/resteves-99/gen-compr-2/blob/968913829dd67514dbe474ead48f0e995511d754/trainers/conv_autoencoder.py
# Report: audited bug with its fix in the CelebA autoencoder-GAN trainer: the author's next commit 665ec1a, titled "fixed memory issue", changed the per-batch logging from train_loss += (g_loss, d_loss) and set_postfix(Gen_Loss=g_loss, ...) to float(g_loss), float(d_loss)
# Shape: train_loss starts as the tuple (0, 0) and += concatenates the two loss tensors onto it every batch, so the tuple grows by two graph-attached tensors per step; d_loss is only backpropagated every 5th batch, so most stored d_loss graphs still hold the discriminator activations
# Expect: TML001 line 65
import torch
from torch.autograd import Variable
from tqdm import tqdm

from models.ae_baseline import baseline_autoencoder, baseline_discriminator


def to_img(x):
    x = 0.5 * (x + 1)
    x = x.clamp(0, 1)
    x = x.view(x.size(0), 3, 216, 178)
    return x


def train(args, train_dataloader, val_dataloader, loss_function, log, example_dir):
    gen_model = baseline_autoencoder(args)
    disc_model = baseline_discriminator(args)
    if torch.cuda.is_available():
        gen_model.cuda()
        disc_model.cuda()

    disc_optimizer = torch.optim.Adam(gen_model.parameters(), lr=args.lr)
    gen_optimizer = torch.optim.Adam(disc_model.parameters(), lr=args.lr)
    real_label = Variable(torch.ones(args.batch_size)).cuda()
    fake_label = Variable(torch.zeros(args.batch_size)).cuda()

    for epoch in range(args.num_epochs):
        log.info(f'Epoch: {epoch}')
        gen_model.train()
        disc_model.train()
        train_loss = (0, 0)
        index = 0
        with torch.enable_grad(), tqdm(total=152000) as progress_bar:
            for batch_idx, data in enumerate(train_dataloader):
                img, _ = data
                img.resize_((args.batch_size, 3, 218, 178))
                if torch.cuda.is_available():
                    img = img.cuda()

                recon_batch = gen_model(img)
                img.resize_((16, 3, 216, 178))

                real_output = disc_model(img)
                fake_output = disc_model(recon_batch)

                d_loss_fake = loss_function(fake_output, fake_label)
                d_loss_real = loss_function(real_output, real_label)
                d_loss = d_loss_real + d_loss_fake
                if index % 5 == 0:
                    disc_optimizer.zero_grad()
                    d_loss.backward(retain_graph=True)
                    disc_optimizer.step()

                g_loss = loss_function(fake_output, real_label)
                gen_optimizer.zero_grad()
                g_loss.backward()
                gen_optimizer.step()

                progress_bar.update(index)
                progress_bar.set_postfix(epoch=epoch, Gen_Loss=g_loss, Disc_Loss=d_loss)
                train_loss += (g_loss, d_loss)  # expect: TML001
                index += 1

        log.info('====> Epoch: {} Average loss: {}'.format(epoch, train_loss))
        if epoch % 5 == 0:
            log.info('saving example images for epoch {}'.format(epoch))
            recon = to_img(recon_batch.cpu().data)
            real = to_img(img.cpu().data)
            torch.save({'recon': recon, 'real': real}, example_dir + f'/images_epoch_{epoch}.pt')

    return gen_model, disc_model
